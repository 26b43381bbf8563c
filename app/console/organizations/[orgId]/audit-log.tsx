'use client';

import { Badge, Button, Code, Group, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert';
import { Empty, Loading } from '../../../components/page-state';
import { RelativeTime } from '../../../components/relative-time';
import { SectionCard } from '../../../components/section-card';
import { consoleApi } from '../../console-client';
import { useConsoleQuery } from '../../use-console-query';

const PAGE_SIZE = 20;

/** Who did what: an operator's change names them (details `operator`), a key's change its key id. */
function actorOf(event: { actor: string; details: Record<string, unknown> }): string {
  const operator = event.details.operator;
  return typeof operator === 'string' ? `${operator} (console)` : event.details.via === 'cli' ? 'operator CLI' : event.actor;
}

/** The organization's audit log, newest first, paged by its keyset cursors: GET /v1/audit, called by the operator on this organization. */
export function AuditLog({ orgId }: { orgId: string }) {
  // The cursors of the pages seen so far: going back pops one.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const page = useConsoleQuery(() => consoleApi.listAuditEvents.query({ limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) }, { context: { orgId } }), [orgId, cursor]);

  return (
    <SectionCard title="Audit log" description="Every change to the organization, newest first.">
      {page.error !== null && <ErrorAlert message={page.error} onRetry={page.reload} />}
      {page.data === undefined && page.error === null && <Loading label="Loading the audit log…" />}
      {page.data !== undefined && page.data.data.length === 0 && <Empty title="Nothing recorded yet" />}
      {page.data !== undefined && page.data.data.length > 0 && (
        <Table verticalSpacing={6} aria-label="Audit log" style={{ opacity: page.loading ? 0.6 : 1 }}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Action</Table.Th>
              <Table.Th>By</Table.Th>
              <Table.Th>Resource</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {page.data.data.map((event) => (
              <Table.Tr key={event.id}>
                <Table.Td>
                  <RelativeTime at={event.created_at} />
                </Table.Td>
                <Table.Td>
                  <Code>{event.action}</Code>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{actorOf(event)}</Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    <Badge size="xs" variant="outline" color="gray" radius="sm">
                      {event.resource_type}
                    </Badge>
                    <Text size="xs" ff="monospace" truncate="end" maw={360}>
                      {event.resource_id}
                    </Text>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Group justify="space-between" mt="sm">
        <Button variant="default" size="xs" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </Button>
        <Text size="xs" c="dimmed">
          Page {cursors.length + 1}
        </Text>
        <Button variant="default" size="xs" disabled={page.data === undefined || page.data.next_cursor === ''} onClick={() => page.data !== undefined && setCursors([...cursors, page.data.next_cursor])}>
          Older
        </Button>
      </Group>
    </SectionCard>
  );
}
