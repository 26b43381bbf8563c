'use client';

import { Button, Checkbox, Group, Modal, NumberInput, Stack, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/error-alert';
import { ShownOnce } from '../../components/shown-once';
import { consoleApi } from '../console-client';
import { useConsoleAction } from '../use-console-query';

/** A number field's value as the API takes it: empty is "no quota". */
export function quotaOrNull(value: string | number): number | null {
  return value === '' ? null : Number(value);
}

/** "New organization": a dialog with the organization's form; an escalation URL's signing secret is shown once before it opens the new organization. */
export function NewOrganizationButton() {
  const router = useRouter();
  const [opened, { open, close }] = useDisclosure(false);
  const [name, setName] = useState('');
  const [entitled, setEntitled] = useState(true);
  const [maxDevices, setMaxDevices] = useState<string | number>('');
  const [maxDeviceSeconds, setMaxDeviceSeconds] = useState<string | number>('');
  const [escalationUrl, setEscalationUrl] = useState('');
  const [created, setCreated] = useState<{ orgId: string; secret: string } | null>(null);
  const action = useConsoleAction();

  function reset() {
    setName('');
    setEntitled(true);
    setMaxDevices('');
    setMaxDeviceSeconds('');
    setEscalationUrl('');
    setCreated(null);
    action.clearError();
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await action.run(() =>
      consoleApi.createOrganization.mutate({ name, entitled, max_devices: quotaOrNull(maxDevices), max_device_seconds: quotaOrNull(maxDeviceSeconds), escalation_url: escalationUrl }),
    );
    if (result === undefined) return;
    if (result.escalation_signing_secret !== undefined) setCreated({ orgId: result.org_id, secret: result.escalation_signing_secret });
    else router.push(`/console/organizations/${result.org_id}`);
  }

  return (
    <>
      <Button
        onClick={() => {
          reset();
          open();
        }}
      >
        New organization
      </Button>
      <Modal opened={opened} onClose={close} title="New organization" size="lg">
        {created !== null ? (
          <ShownOnce label="Escalation signing secret" value={created.secret} testId="escalation-signing-secret" onDone={() => router.push(`/console/organizations/${created.orgId}`)} />
        ) : (
          <form onSubmit={(event) => void submit(event)} aria-label="New organization">
            <Stack gap="sm">
              <TextInput label="Organization name" required value={name} onChange={(event) => setName(event.currentTarget.value)} data-autofocus />
              <Group grow>
                <NumberInput label="Max devices" description="Empty: no quota" min={0} allowDecimal={false} value={maxDevices} onChange={setMaxDevices} />
                <NumberInput label="Device-seconds per 24 h" description="Empty: no quota" min={0} allowDecimal={false} value={maxDeviceSeconds} onChange={setMaxDeviceSeconds} />
              </Group>
              <TextInput
                label="Escalation URL"
                description="Where escalations are POSTed, signed; empty: answered in the console only"
                placeholder="https://example.com/escalations"
                value={escalationUrl}
                onChange={(event) => setEscalationUrl(event.currentTarget.value)}
              />
              <Checkbox label="Entitled to the operator product" checked={entitled} onChange={(event) => setEntitled(event.currentTarget.checked)} />
              {action.error !== null && <ErrorAlert title="Not created" message={action.error} />}
              <Group justify="flex-end">
                <Button variant="default" onClick={close}>
                  Cancel
                </Button>
                <Button type="submit" loading={action.pending}>
                  Create organization
                </Button>
              </Group>
            </Stack>
          </form>
        )}
      </Modal>
    </>
  );
}
