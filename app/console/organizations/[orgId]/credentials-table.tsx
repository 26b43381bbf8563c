'use client';

import { Badge, Button, Code, Group, Modal, PasswordInput, Stack, Table, Text, VisuallyHidden } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../../components/error-alert';
import { Empty, Loading } from '../../../components/page-state';
import { RelativeTime } from '../../../components/relative-time';
import { SectionCard } from '../../../components/section-card';
import { consoleApi, type Organization, type OrganizationCredential } from '../../console-client';
import { useConsoleAction, useConsoleQuery } from '../../use-console-query';

/**
 * An organization's credential vault: names, domains and what each credential holds, never
 * a value. Rotate replaces the password or the TOTP secret (PATCH /v1/credentials/{id}, as
 * the operator); Delete removes the credential. Both are /v1's own operations, audited
 * with the operator.
 */
export function CredentialsTable({ organization }: { organization: Organization }) {
  const orgId = organization.id;
  const call = { context: { orgId } };
  const credentials = useConsoleQuery(() => consoleApi.listCredentials.query({ limit: 100 }, call), [orgId]);
  const action = useConsoleAction();
  const [rotating, setRotating] = useState<OrganizationCredential | null>(null);
  const [deleting, setDeleting] = useState<OrganizationCredential | null>(null);
  const [password, setPassword] = useState('');
  const [totpSecret, setTotpSecret] = useState('');
  const spaceName = (spaceId: string) => organization.spaces.find((space) => space.id === spaceId)?.name ?? spaceId;

  function close() {
    setRotating(null);
    setDeleting(null);
    setPassword('');
    setTotpSecret('');
    action.clearError();
  }

  async function rotate(event: FormEvent) {
    event.preventDefault();
    if (rotating === null) return;
    const changes = { ...(password === '' ? {} : { password }), ...(totpSecret === '' ? {} : { totp_secret: totpSecret }) };
    const done = await action.run(() => consoleApi.updateCredential.mutate({ id: rotating.id, ...changes }, call));
    if (done === undefined) return;
    close();
    credentials.reload();
  }

  async function remove() {
    if (deleting === null) return;
    // The delete answers nothing: `true` tells it from a failure, which run() answers as undefined.
    const done = await action.run(async () => {
      await consoleApi.deleteCredential.mutate({ id: deleting.id }, call);
      return true;
    });
    if (done === undefined) return;
    close();
    credentials.reload();
  }

  return (
    <SectionCard
      title="Credential vault"
      description="What tasks fill with {{vault:<name>.<field>}}. Values are never shown; a rotation replaces them."
      actions={
        <Button variant="default" size="xs" onClick={credentials.reload} loading={credentials.loading && credentials.data !== undefined}>
          Refresh
        </Button>
      }
    >
      <Stack gap="sm">
        {credentials.error !== null && <ErrorAlert message={credentials.error} onRetry={credentials.reload} />}
        {credentials.data === undefined && credentials.error === null && <Loading label="Loading credentials…" />}
        {credentials.data !== undefined && credentials.data.data.length === 0 && <Empty title="No credential" description="The organization's keys store credentials with POST /v1/credentials." />}
        {credentials.data !== undefined && credentials.data.data.length > 0 && (
          <Table verticalSpacing="xs" aria-label="Credentials">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Space</Table.Th>
                <Table.Th>Domains</Table.Th>
                <Table.Th>Holds</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {credentials.data.data.map((credential) => (
                <Table.Tr key={credential.id} data-testid={`credential-${credential.name}`}>
                  <Table.Td>
                    <Text size="sm" fw={600} ff="monospace">
                      {credential.name}
                    </Text>
                  </Table.Td>
                  <Table.Td>{spaceName(credential.space_id)}</Table.Td>
                  <Table.Td>
                    <Group gap={4}>
                      {credential.domains.map((domain) => (
                        <Code key={domain}>{domain}</Code>
                      ))}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4}>
                      {credential.username !== null && (
                        <Badge variant="light" color="gray" tt="none">
                          username {credential.username}
                        </Badge>
                      )}
                      {credential.has_password && <Badge variant="light">password</Badge>}
                      {credential.has_totp && (
                        <Badge variant="light" color="grape">
                          TOTP
                        </Badge>
                      )}
                      {credential.has_notes && (
                        <Badge variant="light" color="gray">
                          notes
                        </Badge>
                      )}
                    </Group>
                  </Table.Td>
                  <Table.Td>{credential.last_used_at === null ? <Text size="sm" c="dimmed">never</Text> : <RelativeTime at={credential.last_used_at} />}</Table.Td>
                  <Table.Td>
                    <Group gap={6} justify="flex-end" wrap="nowrap">
                      <Button size="compact-sm" variant="light" onClick={() => setRotating(credential)} aria-label={`Rotate ${credential.name}`}>
                        Rotate
                      </Button>
                      <Button size="compact-sm" variant="subtle" color="red" onClick={() => setDeleting(credential)} aria-label={`Delete ${credential.name}`}>
                        Delete
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
      <Modal opened={rotating !== null} onClose={close} title={`Rotate ${rotating?.name ?? ''}`} closeButtonProps={{ 'aria-label': 'Close' }}>
        <form onSubmit={(event) => void rotate(event)} aria-label="Rotate credential">
          <Stack gap="sm">
            <Text size="sm">The new values replace the stored ones at once; tasks fill them from their next fill. Leave a field empty to keep its value.</Text>
            <PasswordInput label="New password" autoComplete="new-password" visibilityToggleButtonProps={{ 'aria-label': 'Show the new password' }} value={password} onChange={(event) => setPassword(event.currentTarget.value)} />
            <PasswordInput label="New TOTP secret (base32 or otpauth:// URI)" autoComplete="off" visibilityToggleButtonProps={{ 'aria-label': 'Show the new TOTP secret' }} value={totpSecret} onChange={(event) => setTotpSecret(event.currentTarget.value)} />
            {action.error !== null && <ErrorAlert title="Not rotated" message={action.error} />}
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={action.pending} disabled={password === '' && totpSecret === ''}>
                Rotate
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
      <Modal opened={deleting !== null} onClose={close} title="Delete this credential?" closeButtonProps={{ 'aria-label': 'Close' }}>
        <Stack gap="sm">
          <Text size="sm">
            <strong>{deleting?.name}</strong> is removed with its pushed codes; a task that fills it afterwards fails with <code>credential_not_found</code>.
          </Text>
          {action.error !== null && <ErrorAlert title="Not deleted" message={action.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" onClick={() => void remove()} loading={action.pending}>
              Delete credential
            </Button>
          </Group>
        </Stack>
      </Modal>
    </SectionCard>
  );
}
