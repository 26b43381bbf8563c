'use client';

import { Anchor, Badge, Button, Group, Pagination, Paper, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import Link from 'next/link';
import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/error-alert';
import { Empty, Loading, PageHeader } from '../../components/page-state';
import { RelativeTime } from '../../components/relative-time';
import { consoleApi } from '../console-client';
import { useConsoleQuery } from '../use-console-query';
import { NewOrganizationButton } from './new-organization';

const PAGE_SIZE = 20;

/** Every organization of the preview, newest first: searched by name or id and paged by the console API. */
export function OrganizationsList() {
  const [typed, setTyped] = useState('');
  const [debounced] = useDebouncedValue(typed, 250);
  const [submitted, setSubmitted] = useState<string | null>(null);
  const query = submitted ?? debounced;
  const [page, setPage] = useState(1);

  const organizations = useConsoleQuery(() => consoleApi.organizations.query({ query, page, page_size: PAGE_SIZE }), [query, page]);
  const total = organizations.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));

  function search(event: FormEvent) {
    event.preventDefault();
    setSubmitted(typed);
    setPage(1);
  }

  return (
    <>
      <PageHeader title="Organizations" description="The preview's customers: their Spaces, API keys, devices, usage and audit log." actions={<NewOrganizationButton />} />
      <Paper withBorder radius="md" p="md">
        <form onSubmit={search} role="search" aria-label="Organizations">
          <Group align="flex-end" mb="md">
            <TextInput
              label="Search organizations"
              placeholder="Name or id"
              value={typed}
              onChange={(event) => {
                setTyped(event.currentTarget.value);
                setSubmitted(null);
                setPage(1);
              }}
              w={360}
            />
            <Button type="submit" variant="default">
              Search
            </Button>
            <Text size="sm" c="dimmed" ml="auto" aria-live="polite" data-testid="organization-count">
              {organizations.data === undefined ? '' : `${total.toLocaleString('en')} ${total === 1 ? 'organization' : 'organizations'}`}
            </Text>
          </Group>
        </form>
        {organizations.error !== null && <ErrorAlert message={organizations.error} onRetry={organizations.reload} />}
        {organizations.data === undefined && organizations.error === null && <Loading label="Loading organizations…" />}
        {organizations.data !== undefined && organizations.data.data.length === 0 && (
          <Empty title={query === '' ? 'No organization yet' : 'No organization matches'} description={query === '' ? 'Create the first one with New organization.' : `Nothing is named like “${query}”.`} />
        )}
        {organizations.data !== undefined && organizations.data.data.length > 0 && (
          <Table highlightOnHover verticalSpacing="xs" aria-label="Organizations" style={{ opacity: organizations.loading ? 0.6 : 1 }}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Spaces</Table.Th>
                <Table.Th>Live devices</Table.Th>
                <Table.Th>Escalations</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {organizations.data.data.map((org) => (
                <Table.Tr key={org.id}>
                  <Table.Td>
                    <Anchor component={Link} href={`/console/organizations/${org.id}`} fw={600}>
                      {org.name}
                    </Anchor>
                    {!org.entitled && (
                      <Badge ml="xs" size="xs" color="gray" variant="outline">
                        not entitled
                      </Badge>
                    )}
                    <Text size="xs" c="dimmed" ff="monospace">
                      {org.id}
                    </Text>
                  </Table.Td>
                  <Table.Td>{org.spaces}</Table.Td>
                  <Table.Td>{org.live_devices}</Table.Td>
                  <Table.Td>{org.escalation_url === null ? <Text size="sm" c="dimmed">console only</Text> : <Text size="sm">delivered</Text>}</Table.Td>
                  <Table.Td>
                    <RelativeTime at={org.created_at} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        {pages > 1 && (
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              Page {page} of {pages}
            </Text>
            <Pagination total={pages} value={page} onChange={setPage} siblings={1} boundaries={1} getControlProps={(control) => ({ 'aria-label': `${control} page` })} getItemProps={(item) => ({ 'aria-label': `Page ${item}` })} />
          </Group>
        )}
      </Paper>
    </>
  );
}
