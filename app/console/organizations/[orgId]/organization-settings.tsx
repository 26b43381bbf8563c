'use client';

import { Button, Group, NumberInput, Stack, Text, TextInput } from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../../components/error-alert';
import { SectionCard } from '../../../components/section-card';
import { ShownOnce } from '../../../components/shown-once';
import { consoleApi, type Organization } from '../../console-client';
import { useConsoleAction } from '../../use-console-query';
import { quotaOrNull } from '../new-organization';

const asField = (value: number | null) => (value === null ? '' : value);

/**
 * An organization's quotas and escalation URL, edited in place (`org:update`'s change,
 * audited with the operator), and its escalation signing secret rotated; a secret is shown
 * once, when it is made.
 */
export function OrganizationSettings({ organization, onSaved }: { organization: Organization; onSaved: () => void }) {
  const [maxDevices, setMaxDevices] = useState<string | number>(asField(organization.max_devices));
  const [maxDeviceSeconds, setMaxDeviceSeconds] = useState<string | number>(asField(organization.max_device_seconds));
  const [escalationUrl, setEscalationUrl] = useState(organization.escalation_url ?? '');
  const [secret, setSecret] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const save = useConsoleAction();
  const rotate = useConsoleAction();
  useEffect(() => {
    setMaxDevices(asField(organization.max_devices));
    setMaxDeviceSeconds(asField(organization.max_device_seconds));
    setEscalationUrl(organization.escalation_url ?? '');
  }, [organization]);

  const changed =
    quotaOrNull(maxDevices) !== organization.max_devices || quotaOrNull(maxDeviceSeconds) !== organization.max_device_seconds || escalationUrl.trim() !== (organization.escalation_url ?? '');

  async function submit(event: FormEvent) {
    event.preventDefault();
    setSaved(false);
    const result = await save.run(() =>
      consoleApi.updateOrganization.mutate({ org_id: organization.id, max_devices: quotaOrNull(maxDevices), max_device_seconds: quotaOrNull(maxDeviceSeconds), escalation_url: escalationUrl }),
    );
    if (result === undefined) return;
    if (result.escalation_signing_secret !== undefined) setSecret(result.escalation_signing_secret);
    setSaved(true);
    onSaved();
  }

  async function rotateSecret() {
    const result = await rotate.run(() => consoleApi.rotateEscalationSecret.mutate({ org_id: organization.id }));
    if (result !== undefined) setSecret(result.escalation_signing_secret);
  }

  return (
    <SectionCard title="Quotas and escalations" description="Quotas apply from the next device create or wake.">
      <form onSubmit={(event) => void submit(event)} aria-label="Organization settings">
        <Stack gap="sm">
          <Group grow align="flex-start">
            <NumberInput label="Max devices" description="Empty: no quota" min={0} allowDecimal={false} value={maxDevices} onChange={setMaxDevices} />
            <NumberInput label="Device-seconds per 24 h" description="Empty: no quota" min={0} allowDecimal={false} thousandSeparator="," value={maxDeviceSeconds} onChange={setMaxDeviceSeconds} />
          </Group>
          <TextInput
            label="Escalation URL"
            description="Escalations are POSTed here, signed; empty: answered in the console only"
            placeholder="https://example.com/escalations"
            value={escalationUrl}
            onChange={(event) => setEscalationUrl(event.currentTarget.value)}
          />
          {save.error !== null && <ErrorAlert title="Not saved" message={save.error} />}
          {rotate.error !== null && <ErrorAlert title="Not rotated" message={rotate.error} />}
          {secret !== null && <ShownOnce label="Escalation signing secret" value={secret} testId="escalation-signing-secret" onDone={() => setSecret(null)} />}
          <Group justify="space-between">
            <Button variant="subtle" onClick={() => void rotateSecret()} loading={rotate.pending} disabled={organization.escalation_url === null}>
              Rotate escalation signing secret
            </Button>
            <Group gap="xs">
              {saved && !changed && (
                <Text size="sm" c="teal.8" role="status">
                  Saved
                </Text>
              )}
              <Button type="submit" loading={save.pending} disabled={!changed}>
                Save settings
              </Button>
            </Group>
          </Group>
        </Stack>
      </form>
    </SectionCard>
  );
}
