'use client';

import { Button, Code, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../../components/error-alert';
import { Empty } from '../../../components/page-state';
import { SectionCard } from '../../../components/section-card';
import { consoleApi, type Organization } from '../../console-client';
import { useConsoleAction } from '../../use-console-query';

/** An organization's Spaces (the partitions keys and devices belong to), and a form to add one. */
export function SpacesCard({ organization, onAdded }: { organization: Organization; onAdded: () => void }) {
  const [name, setName] = useState('');
  const add = useConsoleAction();

  async function submit(event: FormEvent) {
    event.preventDefault();
    const created = await add.run(() => consoleApi.createSpace.mutate({ org_id: organization.id, name }));
    if (created === undefined) return;
    setName('');
    onAdded();
  }

  return (
    <SectionCard title="Spaces" description="Devices live in a Space; a key may hold some Spaces or the whole organization.">
      <Stack gap="sm">
        {organization.spaces.length === 0 ? (
          <Empty title="No Space yet" description="A device needs a Space: add one below." />
        ) : (
          <Table verticalSpacing={6} aria-label="Spaces">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Space id</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {organization.spaces.map((space) => (
                <Table.Tr key={space.id}>
                  <Table.Td>
                    <Text size="sm" fw={600}>
                      {space.name}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Code>{space.id}</Code>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        <form onSubmit={(event) => void submit(event)} aria-label="New Space">
          <Group align="flex-end" gap="xs">
            <TextInput label="Space name" required value={name} onChange={(event) => setName(event.currentTarget.value)} style={{ flex: 1 }} />
            <Button type="submit" variant="light" loading={add.pending}>
              Add Space
            </Button>
          </Group>
        </form>
        {add.error !== null && <ErrorAlert title="Not added" message={add.error} />}
      </Stack>
    </SectionCard>
  );
}
