'use client';

import { Anchor, Button, Group, Modal, Stack, Table, Text, VisuallyHidden } from '@mantine/core';
import Link from 'next/link';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert';
import { Empty, Loading } from '../../../components/page-state';
import { RelativeTime } from '../../../components/relative-time';
import { SectionCard } from '../../../components/section-card';
import { StatusBadge } from '../../../components/status-badge';
import { consoleApi, type OperatorDevice } from '../../console-client';
import { useConsoleAction, useConsoleQuery } from '../../use-console-query';

type DeviceAction = 'sleep' | 'wake' | 'delete';

/**
 * An organization's devices (not terminated), with what each is doing, and Sleep, Wake
 * and Delete as /v1 does them (the same refusals: a busy device cannot sleep), audited
 * with the operator. A device's name opens its page (live view, takeover).
 */
export function DevicesTable({ orgId }: { orgId: string }) {
  const devices = useConsoleQuery(() => consoleApi.organizationDevices.query({ org_id: orgId }), [orgId]);
  const action = useConsoleAction();
  const [busy, setBusy] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<OperatorDevice | null>(null);

  async function act(device: OperatorDevice, kind: DeviceAction) {
    setBusy(`${kind}:${device.id}`);
    // /v1's operations, on this organization's device.
    const [input, call] = [{ id: device.id }, { context: { orgId } }];
    const done = await action.run(() =>
      kind === 'sleep' ? consoleApi.sleepDevice.mutate(input, call) : kind === 'wake' ? consoleApi.wakeDevice.mutate(input, call) : consoleApi.deleteDevice.mutate(input, call),
    );
    setBusy(null);
    if (kind === 'delete' && done !== undefined) setDeleting(null);
    devices.reload();
  }

  return (
    <SectionCard
      title="Devices"
      description="Devices that are not terminated, newest first."
      actions={
        <Button variant="default" size="xs" onClick={devices.reload} loading={devices.loading && devices.data !== undefined}>
          Refresh
        </Button>
      }
    >
      <Stack gap="sm">
        {action.error !== null && deleting === null && <ErrorAlert title="The device did not change" message={action.error} />}
        {devices.error !== null && <ErrorAlert message={devices.error} onRetry={devices.reload} />}
        {devices.data === undefined && devices.error === null && <Loading label="Loading devices…" />}
        {devices.data !== undefined && devices.data.length === 0 && <Empty title="No device" description="The organization's keys create devices with POST /v1/devices." />}
        {devices.data !== undefined && devices.data.length > 0 && (
          <Table verticalSpacing="xs" aria-label="Devices">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Device</Table.Th>
                <Table.Th>Space</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Current task</Table.Th>
                <Table.Th>Last active</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {devices.data.map((device) => (
                <Table.Tr key={device.id} data-testid={`device-${device.name}`}>
                  <Table.Td>
                    <Anchor component={Link} href={`/console/devices/${device.id}`} fw={600}>
                      {device.name}
                    </Anchor>
                    <Text size="xs" c="dimmed" ff="monospace">
                      {device.id}
                    </Text>
                  </Table.Td>
                  <Table.Td>{device.space_name}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={device.status} />
                  </Table.Td>
                  <Table.Td maw={280}>
                    {device.current_task_id === null || device.current_task === null ? (
                      <Text size="sm" c="dimmed">
                        idle
                      </Text>
                    ) : (
                      <Group gap={6} wrap="nowrap">
                        <StatusBadge status={device.current_task.status} />
                        <Anchor component={Link} href={`/console/tasks/${device.current_task_id}`} size="sm" truncate="end">
                          {device.current_task.prompt}
                        </Anchor>
                      </Group>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <RelativeTime at={device.last_active_at} />
                  </Table.Td>
                  <Table.Td>
                    <Group gap={6} justify="flex-end" wrap="nowrap">
                      {(device.status === 'active' || device.status === 'error') && (
                        <Button size="compact-sm" variant="light" onClick={() => void act(device, 'sleep')} loading={busy === `sleep:${device.id}`} disabled={device.current_task_id !== null} aria-label={`Sleep ${device.name}`}>
                          Sleep
                        </Button>
                      )}
                      {(device.status === 'sleeping' || device.status === 'error') && (
                        <Button size="compact-sm" variant="light" color="green" onClick={() => void act(device, 'wake')} loading={busy === `wake:${device.id}`} aria-label={`Wake ${device.name}`}>
                          Wake
                        </Button>
                      )}
                      <Button size="compact-sm" variant="subtle" color="red" onClick={() => setDeleting(device)} aria-label={`Delete ${device.name}`}>
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
      <Modal
        opened={deleting !== null}
        onClose={() => {
          setDeleting(null);
          action.clearError();
        }}
        title="Delete this device?"
      >
        <Stack gap="sm">
          <Text size="sm">
            <strong>{deleting?.name}</strong> is terminated: its browser stops, its profile (cookies, storage) is removed, and a task it runs fails with <code>device_lost</code>. This cannot be undone.
          </Text>
          {action.error !== null && <ErrorAlert title="Not deleted" message={action.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setDeleting(null)}>
              Cancel
            </Button>
            <Button color="red" onClick={() => deleting !== null && void act(deleting, 'delete')} loading={busy === `delete:${deleting?.id}`}>
              Delete device
            </Button>
          </Group>
        </Stack>
      </Modal>
    </SectionCard>
  );
}
