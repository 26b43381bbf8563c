'use client';

import { Anchor, Badge, Button, Group, Paper, Table, Text } from '@mantine/core';
import Link from 'next/link';
import { ErrorAlert } from '../components/error-alert';
import { Empty, Loading, PageHeader } from '../components/page-state';
import { RelativeTime } from '../components/relative-time';
import { consoleApi } from './console-client';
import { useConsoleQuery } from './use-console-query';

/** The landing page: escalations waiting for a person, of every organization, oldest first. */
export function EscalationsInbox() {
  const pending = useConsoleQuery(() => consoleApi.pendingEscalations.query(), []);

  return (
    <>
      <PageHeader
        title="Escalations"
        description="Tasks waiting for a person, oldest first. Open one to see its steps and the device, take over, or answer."
        actions={
          <Button variant="default" onClick={pending.reload} loading={pending.loading && pending.data !== undefined}>
            Refresh
          </Button>
        }
      />
      <Paper withBorder radius="md" p="md">
        {pending.error !== null && <ErrorAlert message={pending.error} onRetry={pending.reload} />}
        {pending.data === undefined && pending.error === null && <Loading label="Loading escalations…" />}
        {pending.data !== undefined && pending.data.length === 0 && <Empty title="No escalation is waiting" description="When a task asks for a person, it appears here." />}
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
                  <Table.Td>
                    <Anchor component={Link} href={`/console/escalations/${escalation.id}`} fw={600}>
                      {escalation.reason}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{escalation.organization}</Table.Td>
                  <Table.Td>
                    <Badge variant="light">{escalation.kind}</Badge>
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
        <Group justify="flex-end" mt="xs">
          <Text size="xs" c="dimmed">
            {pending.data?.length ?? 0} waiting
          </Text>
        </Group>
      </Paper>
    </>
  );
}
