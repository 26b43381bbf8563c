'use client';

import { Alert, Anchor, Breadcrumbs, Button, Code, Grid, Group, Stack, Table, Text } from '@mantine/core';
import Link from 'next/link';
import { useEffect } from 'react';
import { ErrorAlert } from '../../../components/error-alert';
import { Loading, PageHeader } from '../../../components/page-state';
import { RelativeTime } from '../../../components/relative-time';
import { SectionCard } from '../../../components/section-card';
import { StatusBadge } from '../../../components/status-badge';
import { StepTimeline } from '../../../components/step-timeline';
import { consoleApi, type OperatorTaskView } from '../../console-client';
import { useConsoleQuery } from '../../use-console-query';

/** How often a live task's page reads it again. */
const LIVE_REFRESH_MS = 3000;

/** A task of any organization: prompt, status, result, usage, escalations and its step timeline; a live task refreshes itself. */
export function TaskPage({ taskId }: { taskId: string }) {
  const view = useConsoleQuery(() => consoleApi.task.query({ task_id: taskId }), [taskId]);
  const live = view.data !== undefined && (view.data.task.status === 'running' || view.data.task.status === 'needs_human');
  const { reload } = view;
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(reload, LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, reload]);

  if (view.data === undefined) {
    return view.error !== null ? <ErrorAlert message={view.error} onRetry={view.reload} /> : <Loading label="Loading the task…" />;
  }
  const { task, organization, device, steps, escalations, recording_url: recordingUrl } = view.data;

  return (
    <>
      <Breadcrumbs mb="xs">
        <Anchor component={Link} href="/console/organizations" size="sm">
          Organizations
        </Anchor>
        <Anchor component={Link} href={`/console/organizations/${organization.id}`} size="sm">
          {organization.name}
        </Anchor>
        <Anchor component={Link} href={`/console/organizations/${organization.id}#tasks`} size="sm">
          Tasks
        </Anchor>
        <Text size="sm" ff="monospace">
          {task.id}
        </Text>
      </Breadcrumbs>
      <PageHeader
        title={
          <Group gap="sm" component="span">
            Task <StatusBadge status={task.status} />
          </Group>
        }
        description={live ? 'Running: this page follows it.' : undefined}
        actions={
          <Button variant="default" onClick={view.reload} loading={view.loading}>
            Refresh
          </Button>
        }
      />
      <Grid gap="md">
        <Grid.Col span={{ base: 12, md: 7 }}>
          <Stack gap="md">
            <SectionCard title="Prompt">
              <Text size="sm" style={{ whiteSpace: 'pre-wrap' }} data-testid="task-prompt">
                {task.prompt}
              </Text>
            </SectionCard>
            <SectionCard title="Steps" description={`${steps.length} recorded, in order.`}>
              <StepTimeline steps={steps} />
            </SectionCard>
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 5 }}>
          <Stack gap="md">
            <SectionCard title="Result">
              <Result task={task} />
            </SectionCard>
            <SectionCard title="Recording">
              <Recording url={recordingUrl} live={live} />
            </SectionCard>
            <SectionCard title="Details">
              <Table variant="vertical" verticalSpacing={6} aria-label="Task details">
                <Table.Tbody>
                  <Table.Tr>
                    <Table.Th w={140}>Device</Table.Th>
                    <Table.Td>
                      <Anchor component={Link} href={`/console/devices/${device.id}`} size="sm">
                        {device.name}
                      </Anchor>{' '}
                      <StatusBadge status={device.status} />
                    </Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Th>Created</Table.Th>
                    <Table.Td>
                      <RelativeTime at={task.created_at} />
                    </Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Th>Finished</Table.Th>
                    <Table.Td>{task.finished_at === null ? '—' : <RelativeTime at={task.finished_at} />}</Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Th>Steps</Table.Th>
                    <Table.Td>{task.usage.steps}</Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Th>Model calls</Table.Th>
                    <Table.Td>{task.usage.model_calls}</Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Th>Tokens</Table.Th>
                    <Table.Td>
                      {task.usage.input_tokens.toLocaleString('en')} in · {task.usage.output_tokens.toLocaleString('en')} out
                    </Table.Td>
                  </Table.Tr>
                  {task.cache !== null && (
                    <Table.Tr>
                      <Table.Th>Cache</Table.Th>
                      <Table.Td>
                        <Code>{task.cache.key}</Code> {task.cache.outcome} · {task.usage.replayed_steps} replayed steps
                      </Table.Td>
                    </Table.Tr>
                  )}
                </Table.Tbody>
              </Table>
            </SectionCard>
            <SectionCard title="Escalations">
              {escalations.length === 0 ? (
                <Text size="sm" c="dimmed">
                  The task has not asked for a person.
                </Text>
              ) : (
                <Stack gap="xs">
                  {escalations.map((escalation) => (
                    <Group key={escalation.id} justify="space-between" wrap="nowrap">
                      <Anchor component={Link} href={`/console/escalations/${escalation.id}`} size="sm" lineClamp={1}>
                        {escalation.reason}
                      </Anchor>
                      <StatusBadge status={escalation.status} />
                    </Group>
                  ))}
                </Stack>
              )}
            </SectionCard>
          </Stack>
        </Grid.Col>
      </Grid>
    </>
  );
}

/** The video of the task's latest run, seekable (the route serves ranges); a plain sentence while there is none. */
function Recording({ url, live }: { url: string | null; live: boolean }) {
  if (url === null) {
    return (
      <Text size="sm" c="dimmed" data-testid="no-recording">
        {live ? 'The recording of this run appears here when it ends.' : 'This task has no recording.'}
      </Text>
    );
  }
  return (
    // No captions: the video is a silent screen capture of the steps listed beside it.
    <video controls preload="metadata" src={url} aria-label="Recording of the task's latest run" data-testid="task-recording" style={{ width: '100%', borderRadius: 'var(--mantine-radius-sm)', background: 'var(--mantine-color-dark-7)' }} />
  );
}

function Result({ task }: { task: OperatorTaskView['task'] }) {
  if (task.result === null) {
    return (
      <Text size="sm" c="dimmed">
        No result yet.
      </Text>
    );
  }
  const failure = task.status === 'failed' && typeof task.result === 'object' && !Array.isArray(task.result) ? (task.result as { error?: unknown; detail?: unknown }) : null;
  if (failure !== null) {
    return (
      <Alert color="red" variant="light" title={String(failure.error ?? 'failed')}>
        {String(failure.detail ?? '')}
      </Alert>
    );
  }
  return (
    <Code block data-testid="task-result">
      {typeof task.result === 'string' ? task.result : JSON.stringify(task.result, null, 2)}
    </Code>
  );
}
