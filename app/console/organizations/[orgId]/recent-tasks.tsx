'use client';

import { Anchor, Button, Table, Text } from '@mantine/core';
import Link from 'next/link';
import { ErrorAlert } from '../../../components/error-alert';
import { Empty, Loading } from '../../../components/page-state';
import { RelativeTime } from '../../../components/relative-time';
import { SectionCard } from '../../../components/section-card';
import { StatusBadge } from '../../../components/status-badge';
import { consoleApi } from '../../console-client';
import { useConsoleQuery } from '../../use-console-query';

/** The organization's latest 20 tasks; each opens its task page (prompt, result, steps). */
export function RecentTasks({ orgId }: { orgId: string }) {
  const tasks = useConsoleQuery(() => consoleApi.recentTasks.query({ org_id: orgId }), [orgId]);
  return (
    <SectionCard
      title="Recent tasks"
      description="The latest 20, newest first."
      actions={
        <Button variant="default" size="xs" onClick={tasks.reload} loading={tasks.loading && tasks.data !== undefined}>
          Refresh
        </Button>
      }
    >
      {tasks.error !== null && <ErrorAlert message={tasks.error} onRetry={tasks.reload} />}
      {tasks.data === undefined && tasks.error === null && <Loading label="Loading tasks…" />}
      {tasks.data !== undefined && tasks.data.length === 0 && <Empty title="No task yet" description="Tasks appear here once the organization's keys submit them." />}
      {tasks.data !== undefined && tasks.data.length > 0 && (
        <Table verticalSpacing="xs" aria-label="Recent tasks">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Prompt</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Device</Table.Th>
              <Table.Th>Steps</Table.Th>
              <Table.Th>Created</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {tasks.data.map((task) => (
              <Table.Tr key={task.id}>
                <Table.Td maw={520}>
                  <Anchor component={Link} href={`/console/tasks/${task.id}`} size="sm" lineClamp={2}>
                    {task.prompt}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={task.status} />
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{task.device_name}</Text>
                </Table.Td>
                <Table.Td>{task.usage.steps}</Table.Td>
                <Table.Td>
                  <RelativeTime at={task.created_at} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </SectionCard>
  );
}
