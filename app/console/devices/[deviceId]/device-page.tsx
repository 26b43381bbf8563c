'use client';

import { Alert, Anchor, Code, Grid, Group, Paper, Stack, Text } from '@mantine/core';
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useEffect } from 'react';
import { DeviceLivePanel } from '../../../components/device-live-panel';
import { ErrorAlert } from '../../../components/error-alert';
import { Loading, PageHeader } from '../../../components/page-state';
import { StatusBadge } from '../../../components/status-badge';
import { consoleApi } from '../../console-client';
import { useConsoleQuery } from '../../use-console-query';

const POLL_MS = 2000;

/** One device: its status, its current task, its live view, and Take over / Release while a task runs. */
export function DevicePage() {
  const { deviceId } = useParams<{ deviceId: string }>();
  const view = useConsoleQuery(() => consoleApi.device.query({ id: deviceId }), [deviceId]);
  const { reload } = view;
  useEffect(() => {
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [reload]);

  if (view.data === undefined) {
    return view.error !== null ? <ErrorAlert message={view.error} onRetry={reload} /> : <Loading label="Loading the device…" />;
  }
  const { device, task, organization, pending_escalation_id: escalationId } = view.data;
  const taskLive = task !== null && (task.status === 'running' || task.status === 'needs_human');
  return (
    <>
      <PageHeader title={device.name || device.id} description={`${organization.name} · ${device.id}`} />
      {view.error !== null && <ErrorAlert message={view.error} onRetry={reload} />}
      <Grid gap="md">
        <Grid.Col span={{ base: 12, lg: 7 }}>
          {device.status === 'active' ? (
            <DeviceLivePanel
              label={`Live view of ${device.name || device.id}`}
              mintWatch={() => consoleApi.watchDevice.mutate({ device_id: device.id })}
              takeOver={taskLive ? () => consoleApi.takeOverDevice.mutate({ device_id: device.id }) : null}
              release={(sessionId) => consoleApi.releaseTakeover.mutate({ session_id: sessionId })}
              end={(sessionId) => consoleApi.endSession.mutate({ session_id: sessionId })}
              onChanged={reload}
            />
          ) : (
            <Alert color="gray" title="No live view">
              The device is {device.status}; a live view needs an active device.
            </Alert>
          )}
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <Stack gap="md">
            <Paper withBorder radius="md" p="md">
              <Group justify="space-between">
                <Text fw={600}>Status</Text>
                <span data-testid="device-status">
                  <StatusBadge status={device.status} />
                </span>
              </Group>
              <Text size="sm" c="dimmed" mt="xs">
                Region {device.region} · Space <Code>{device.space_id}</Code>
              </Text>
            </Paper>
            <Paper withBorder radius="md" p="md">
              <Text fw={600} mb="xs">
                Current task
              </Text>
              {task === null ? (
                <Text size="sm" c="dimmed">
                  No task is running on this device.
                </Text>
              ) : (
                <Stack gap={6}>
                  <Group gap="xs">
                    <span data-testid="task-status">
                      <StatusBadge status={task.status} />
                    </span>
                    <Code>{task.id}</Code>
                  </Group>
                  <Code block style={{ whiteSpace: 'pre-wrap' }}>
                    {task.prompt}
                  </Code>
                  {escalationId !== null && (
                    <Anchor component={Link} href={`/console/escalations/${escalationId}`}>
                      The task waits for a person: open its escalation
                    </Anchor>
                  )}
                </Stack>
              )}
            </Paper>
          </Stack>
        </Grid.Col>
      </Grid>
    </>
  );
}
