'use client';

import { Anchor, Badge, Button, Group, Paper, Select, Table, Text } from '@mantine/core';
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { ErrorAlert } from '../components/error-alert';
import { Empty, Loading, PageHeader } from '../components/page-state';
import { RelativeTime } from '../components/relative-time';
import { consoleApi } from './console-client';
import { useConsoleQuery } from './use-console-query';

const ALL = '';

/**
 * The landing page: escalations waiting for a person, oldest first, of every organization
 * or of the one chosen (the filter is applied by the console API; `?org=<id>` links here
 * filtered, as an organization's page does).
 */
export function EscalationsInbox() {
  const [orgId, setOrgId] = useState<string>(ALL);
  useEffect(() => setOrgId(new URLSearchParams(window.location.search).get('org') ?? ALL), []);
  const choose = (value: string | null) => {
    const chosen = value ?? ALL;
    setOrgId(chosen);
    window.history.replaceState(null, '', chosen === ALL ? '/console' : `/console?org=${encodeURIComponent(chosen)}`);
  };

  const pending = useConsoleQuery(() => consoleApi.pendingEscalations.query(orgId === ALL ? {} : { org_id: orgId }), [orgId]);
  const organizations = useConsoleQuery(() => consoleApi.waitingOrganizations.query(), []);
  const reload = () => {
    pending.reload();
    organizations.reload();
  };
  const options = [
    { value: ALL, label: 'All organizations' },
    ...(organizations.data ?? []).map((org) => ({ value: org.id, label: `${org.name} (${org.waiting})` })),
    // A filter from a link to an organization with nothing waiting stays choosable.
    ...(orgId !== ALL && !(organizations.data ?? []).some((org) => org.id === orgId) ? [{ value: orgId, label: 'This organization (0)' }] : []),
  ];

  return (
    <>
      <PageHeader
        title="Escalations"
        description="Tasks waiting for a person, oldest first. Open one to see its steps and the device, take over, or answer."
        actions={
          <Button variant="default" onClick={reload} loading={pending.loading && pending.data !== undefined}>
            Refresh
          </Button>
        }
      />
      <Paper withBorder radius="md" p="md">
        <Group justify="space-between" align="flex-end" mb="md">
          <Select label="Organization" data={options} value={orgId} onChange={choose} allowDeselect={false} w={320} searchable nothingFoundMessage="No organization with waiting escalations" />
          <Text size="sm" c="dimmed" aria-live="polite">
            {pending.data === undefined ? '' : `${pending.data.length} waiting`}
          </Text>
        </Group>
        {pending.error !== null && <ErrorAlert message={pending.error} onRetry={pending.reload} />}
        {pending.data === undefined && pending.error === null && <Loading label="Loading escalations…" />}
        {pending.data !== undefined && pending.data.length === 0 && (
          <Empty title="No escalation is waiting" description={orgId === ALL ? 'When a task asks for a person, it appears here.' : 'Nothing is waiting for this organization.'} />
        )}
        {pending.data !== undefined && pending.data.length > 0 && (
          <Table highlightOnHover verticalSpacing="sm" aria-label="Waiting escalations">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Question</Table.Th>
                <Table.Th>Organization</Table.Th>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Waiting since</Table.Th>
                <Table.Th>Expires</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {pending.data.map((escalation) => (
                <Table.Tr key={escalation.id}>
                  <Table.Td maw={480}>
                    <Anchor component={Link} href={`/console/escalations/${escalation.id}`} fw={600} lineClamp={2}>
                      {escalation.reason}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Anchor component={Link} href={`/console/organizations/${escalation.org_id}`} c="inherit" size="sm">
                      {escalation.organization}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light" color="orange" radius="sm">
                      {escalation.kind}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <RelativeTime at={escalation.created_at} />
                  </Table.Td>
                  <Table.Td>
                    <RelativeTime at={escalation.expires_at} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Paper>
    </>
  );
}
