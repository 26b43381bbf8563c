'use client';

import { Badge, Button, Checkbox, Code, Group, Modal, Radio, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../../components/error-alert';
import { Empty, Loading } from '../../../components/page-state';
import { RelativeTime } from '../../../components/relative-time';
import { SectionCard } from '../../../components/section-card';
import { ShownOnce } from '../../../components/shown-once';
import { consoleApi, type ApiKeyRow, type Organization } from '../../console-client';
import { useConsoleAction, useConsoleQuery } from '../../use-console-query';

/** An organization's API keys: the list (never a secret), a new key with a scope picker (shown once), revoke. */
export function ApiKeys({ organization }: { organization: Organization }) {
  const keys = useConsoleQuery(() => consoleApi.keys.query({ org_id: organization.id }), [organization.id]);
  const [revoking, setRevoking] = useState<ApiKeyRow | null>(null);
  const revoke = useConsoleAction();

  async function confirmRevoke() {
    if (revoking === null) return;
    const done = await revoke.run(() => consoleApi.revokeKey.mutate({ key_id: revoking.key_id }));
    if (done === undefined) return;
    setRevoking(null);
    keys.reload();
  }

  return (
    <Stack gap="md">
      <NewKey organization={organization} onMinted={keys.reload} />
      <SectionCard title="Keys" description="Newest first. Secrets are stored as hashes only and never shown again.">
        {keys.error !== null && <ErrorAlert message={keys.error} onRetry={keys.reload} />}
        {keys.data === undefined && keys.error === null && <Loading label="Loading keys…" />}
        {keys.data !== undefined && keys.data.length === 0 && <Empty title="No key yet" description="Mint the organization's first key above." />}
        {keys.data !== undefined && keys.data.length > 0 && (
          <Table verticalSpacing="xs" aria-label="API keys">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Key</Table.Th>
                <Table.Th>Scopes</Table.Th>
                <Table.Th>Spaces</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>Status</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {keys.data.map((key) => (
                <Table.Tr key={key.key_id}>
                  <Table.Td>
                    <Code>
                      svc_operator_{key.env}_{key.key_id}_****
                    </Code>
                  </Table.Td>
                  <Table.Td maw={360}>
                    <Group gap={4}>
                      {key.scopes.map((scope) => (
                        <Badge key={scope} size="xs" variant="outline" radius="sm" tt="none">
                          {scope.replace('operator:', '')}
                        </Badge>
                      ))}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{key.space_ids.length === 0 ? 'all' : key.space_ids.map((id) => organization.spaces.find((space) => space.id === id)?.name ?? id).join(', ')}</Text>
                  </Table.Td>
                  <Table.Td>
                    <RelativeTime at={key.created_at} />
                  </Table.Td>
                  <Table.Td>{key.last_used_at === null ? <Text size="sm" c="dimmed">never</Text> : <RelativeTime at={key.last_used_at} />}</Table.Td>
                  <Table.Td>
                    {key.revoked_at === null ? (
                      <Button size="compact-sm" color="red" variant="light" onClick={() => setRevoking(key)} aria-label={`Revoke ${key.key_id}`}>
                        Revoke
                      </Button>
                    ) : (
                      <Text size="sm" c="dimmed">
                        revoked <RelativeTime at={key.revoked_at} />
                      </Text>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </SectionCard>
      <Modal opened={revoking !== null} onClose={() => setRevoking(null)} title="Revoke this key?">
        <Stack gap="sm">
          <Text size="sm">
            <Code>{revoking?.key_id}</Code> stops working on every instance within a second, with the sessions and event streams it opened. This cannot be undone.
          </Text>
          {revoke.error !== null && <ErrorAlert title="Not revoked" message={revoke.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setRevoking(null)}>
              Cancel
            </Button>
            <Button color="red" onClick={() => void confirmRevoke()} loading={revoke.pending}>
              Revoke key
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

function NewKey({ organization, onMinted }: { organization: Organization; onMinted: () => void }) {
  const scopes = useConsoleQuery(() => consoleApi.scopes.query(), []);
  const [chosenScopes, setChosenScopes] = useState<string[]>([]);
  const [chosenSpaces, setChosenSpaces] = useState<string[]>([]);
  const [env, setEnv] = useState<'live' | 'test'>('test');
  const [minted, setMinted] = useState<string | null>(null);
  const mint = useConsoleAction();

  async function submit(event: FormEvent) {
    event.preventDefault();
    const created = await mint.run(() => consoleApi.createKey.mutate({ org_id: organization.id, scopes: chosenScopes, space_ids: chosenSpaces, env }));
    if (created === undefined) return;
    setMinted(created.key);
    setChosenScopes([]);
    setChosenSpaces([]);
    onMinted();
  }

  return (
    <SectionCard title="New API key" description="Pick what the key may do; no Space picked makes it organization-wide.">
      {minted !== null ? (
        <ShownOnce label="New API key" value={minted} testId="minted-key" onDone={() => setMinted(null)} />
      ) : (
        <form onSubmit={(event) => void submit(event)} aria-label="New API key">
          <Stack gap="sm">
            <Checkbox.Group label="Scopes" value={chosenScopes} onChange={setChosenScopes} required>
              <SimpleGrid cols={3} spacing="xs" mt={6}>
                {(scopes.data ?? []).map((scope) => (
                  <Checkbox key={scope} value={scope} label={scope} />
                ))}
              </SimpleGrid>
            </Checkbox.Group>
            {organization.spaces.length > 0 && (
              <Checkbox.Group label="Spaces" description="None: every Space of the organization" value={chosenSpaces} onChange={setChosenSpaces}>
                <Group gap="md" mt={6}>
                  {organization.spaces.map((space) => (
                    <Checkbox key={space.id} value={space.id} label={space.name} />
                  ))}
                </Group>
              </Checkbox.Group>
            )}
            <Radio.Group label="Environment" value={env} onChange={(value) => setEnv(value === 'live' ? 'live' : 'test')}>
              <Group gap="md" mt={6}>
                <Radio value="test" label="test" />
                <Radio value="live" label="live" />
              </Group>
            </Radio.Group>
            {scopes.error !== null && <ErrorAlert message={scopes.error} onRetry={scopes.reload} />}
            {mint.error !== null && <ErrorAlert title="Not created" message={mint.error} />}
            <Group justify="flex-end">
              <Button type="submit" loading={mint.pending} disabled={chosenScopes.length === 0}>
                Create key
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </SectionCard>
  );
}
