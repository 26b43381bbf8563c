'use client';

import { Alert, Container, Grid, Stack, Text, Title } from '@mantine/core';
import { useParams } from 'next/navigation';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { AnswerForm } from '../../components/answer-form';
import { DeviceLivePanel } from '../../components/device-live-panel';
import { EscalationSummary } from '../../components/escalation-summary';
import { Loading } from '../../components/page-state';
import { answerApi, codeOf, sentenceOf } from './answer-client';

const POLL_MS = 2000;
/** The access token the link was traded for, kept for this tab's visit only (a reload keeps working). */
const accessKey = (id: string) => `answer-access:${id}`;

type View = Awaited<ReturnType<ReturnType<typeof answerApi>['answerLink']['query']>>;
type Phase = { state: 'opening' } | { state: 'open'; view: View } | { state: 'refused'; title: string; message: string } | { state: 'answered'; resumed: boolean };

const REFUSALS: Record<string, string> = {
  answer_link_used: 'This link was already used',
  escalation_closed: 'This escalation is closed',
  invalid_answer_link: 'This link is not valid',
  rate_limited: 'Too many attempts',
};

/**
 * The page of an escalation's answer_url, for a person without a console key. The link's
 * secret is read from the URL's fragment (which browsers never send), traded once for an
 * access token, and removed from the address bar. Then: the question, the task's prompt
 * and steps, the device live, Take over / Release when allowed, and the answer form.
 * Once the escalation is answered, expired or canceled, or the link was used before, the
 * page says so instead.
 */
export function AnswerPage() {
  const { id } = useParams<{ id: string }>();
  const accessRef = useRef<string | null>(null);
  const api = useMemo(() => answerApi(() => accessRef.current), []);
  const [phase, setPhase] = useState<Phase>({ state: 'opening' });

  const refuse = useCallback((error: unknown) => {
    const code = codeOf(error) ?? '';
    const refused: Phase = { state: 'refused', title: REFUSALS[code] ?? 'This link cannot be opened', message: sentenceOf(error) };
    setPhase((current) => (current.state === 'answered' ? current : refused));
  }, []);

  const load = useCallback(() => {
    api.answerLink.query({ escalation_id: id }).then((view) => setPhase((current) => (current.state === 'answered' ? current : { state: 'open', view })), refuse);
  }, [api, id, refuse]);

  useEffect(() => {
    const stored = sessionStorage.getItem(accessKey(id));
    const secret = window.location.hash.slice(1);
    // The secret leaves the address bar (and the history) as soon as it has been read.
    if (secret !== '') history.replaceState(null, '', window.location.pathname);
    if (stored !== null) {
      accessRef.current = stored;
      load();
      return;
    }
    if (secret === '') {
      setPhase({ state: 'refused', title: 'This link is not complete', message: 'Open the whole link you were sent, including the part after #.' });
      return;
    }
    api.openAnswerLink.mutate({ escalation_id: id, secret }).then(({ access_token }) => {
      sessionStorage.setItem(accessKey(id), access_token);
      accessRef.current = access_token;
      load();
    }, refuse);
  }, [api, id, load, refuse]);

  useEffect(() => {
    if (phase.state !== 'open') return;
    const timer = setInterval(load, POLL_MS);
    return () => clearInterval(timer);
  }, [phase.state, load]);

  return (
    <Container size="xl" py="lg" component="main">
      <Title order={1} size="h2" mb="xs">
        A task needs your help
      </Title>
      <Text c="dimmed" size="sm" mb="lg">
        An automated browser task stopped and asked for a person. Read the question, watch the device, take it over if you need to, and answer.
      </Text>
      {phase.state === 'opening' && <Loading label="Opening the link…" />}
      {phase.state === 'refused' && (
        <Alert color="red" variant="light" title={phase.title} role="alert" data-testid="answer-refused">
          {phase.message}
        </Alert>
      )}
      {phase.state === 'answered' && (
        <Alert color="green" variant="light" title="Thank you: your answer was sent" role="status" data-testid="answer-sent">
          {phase.resumed ? 'The task is running again with your answer. This link no longer works.' : 'This link no longer works.'}
        </Alert>
      )}
      {phase.state === 'open' && (
        <Grid gap="md">
          <Grid.Col span={{ base: 12, lg: 7 }}>
            <Stack gap="md">
              <AnswerForm
                escalation={phase.view.escalation}
                onAnswer={async (answer, cleared) => {
                  const result = await api.answerEscalation.mutate({ escalation_id: id, answer, cleared });
                  sessionStorage.removeItem(accessKey(id));
                  // A confirmation answered No stops the task, like an answer that says the wall is still up.
                  setPhase({ state: 'answered', resumed: result.applied && cleared && answer !== false });
                }}
              />
              {phase.view.device.status === 'active' && (
                <DeviceLivePanel
                  label="Live view of the device"
                  mintWatch={() => api.watchDevice.mutate({ escalation_id: id, device_id: phase.view.device.id })}
                  takeOver={phase.view.may_take_over ? () => api.takeOverDevice.mutate({ escalation_id: id, device_id: phase.view.device.id }) : null}
                  release={(sessionId) => api.releaseTakeover.mutate({ escalation_id: id, session_id: sessionId })}
                  end={(sessionId) => api.endSession.mutate({ escalation_id: id, session_id: sessionId })}
                  onChanged={load}
                />
              )}
            </Stack>
          </Grid.Col>
          <Grid.Col span={{ base: 12, lg: 5 }}>
            <EscalationSummary data={phase.view} />
          </Grid.Col>
        </Grid>
      )}
    </Container>
  );
}
