'use client';

import { Alert, Anchor, Grid, Stack } from '@mantine/core';
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useEffect } from 'react';
import { AnswerForm } from '../../../components/answer-form';
import { DeviceLivePanel } from '../../../components/device-live-panel';
import { ErrorAlert } from '../../../components/error-alert';
import { EscalationSummary } from '../../../components/escalation-summary';
import { Loading, PageHeader } from '../../../components/page-state';
import { consoleApi } from '../../console-client';
import { useConsoleQuery } from '../../use-console-query';

/** How often the page re-reads the escalation and its task, to show the task running again. */
const POLL_MS = 1500;

/**
 * One escalation: the question, the task's prompt and steps, the device's live view with
 * Take over / Release, and the answer form. Answering or releasing resumes the task; the
 * page keeps reading it, so its status and new steps show as the agent goes on.
 */
export function EscalationPage() {
  const { id } = useParams<{ id: string }>();
  const detail = useConsoleQuery(() => consoleApi.escalation.query({ id }), [id]);
  const { reload } = detail;
  useEffect(() => {
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [reload]);

  if (detail.data === undefined) {
    return detail.error !== null ? <ErrorAlert message={detail.error} onRetry={reload} /> : <Loading label="Loading the escalation…" />;
  }
  const { escalation, task, device, next_escalation_id: next } = detail.data;
  const pending = escalation.status === 'pending';
  const taskLive = task.status === 'running' || task.status === 'needs_human';
  return (
    <>
      <PageHeader
        title="Escalation"
        description={
          <>
            {detail.data.organization.name} · device{' '}
            <Anchor component={Link} href={`/console/devices/${device.id}`} underline="always">
              {device.name || device.id}
            </Anchor>
          </>
        }
      />
      {detail.error !== null && <ErrorAlert message={detail.error} onRetry={reload} />}
      {!pending && (
        <Alert color={escalation.status === 'resolved' ? 'green' : 'gray'} mb="md" title={`This escalation is ${escalation.status}`} data-testid="escalation-closed">
          {escalation.status === 'resolved' ? `Answered by ${escalation.resolved_by ?? 'someone'}. ` : ''}
          The task is {task.status.replace('_', ' ')}.
          {next !== null && (
            <>
              {' '}The task asked again:{' '}
              <Anchor component={Link} href={`/console/escalations/${next}`} underline="always">
                open the new escalation
              </Anchor>
              .
            </>
          )}
        </Alert>
      )}
      <Grid gap="md">
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <Stack gap="md">
            {pending && (
              <AnswerForm
                escalation={escalation}
                onAnswer={async (answer, cleared) => {
                  await consoleApi.answerEscalation.mutate({ escalation_id: escalation.id, answer, cleared });
                  reload();
                }}
              />
            )}
            {device.status === 'active' ? (
              <DeviceLivePanel
                label={`Live view of ${device.name || device.id}`}
                mintWatch={() => consoleApi.watchDevice.mutate({ device_id: device.id })}
                takeOver={taskLive ? () => consoleApi.takeOverDevice.mutate({ device_id: device.id, reason: `escalation ${escalation.id}` }) : null}
                release={(sessionId) => consoleApi.releaseTakeover.mutate({ session_id: sessionId })}
                end={(sessionId) => consoleApi.endSession.mutate({ session_id: sessionId })}
                onChanged={reload}
              />
            ) : (
              <Alert color="gray" title="No live view">
                The device is {device.status}.
              </Alert>
            )}
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <EscalationSummary data={detail.data} />
        </Grid.Col>
      </Grid>
    </>
  );
}
