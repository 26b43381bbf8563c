'use client';

import { Badge, Code, Group, List, Paper, Stack, Text, Title } from '@mantine/core';
import { kindInWords, timeoutInWords, type AnswerableEscalation } from './escalation-kind';
import { RelativeTime } from './relative-time';
import { StatusBadge } from './status-badge';
import { StepTimeline, type TimelineStep } from './step-timeline';

export type EscalationSummaryData = {
  escalation: AnswerableEscalation & { id: string; reason: string; status: string; created_at: string; answer: unknown; resolved_by: string | null };
  organization: { name: string };
  task: { id: string; prompt: string; status: string; result: unknown };
  steps: TimelineStep[];
};

/** The expiry as an absolute time in the reader's zone, e.g. "23 Nov 2026, 15:25 UTC". */
function absoluteTime(at: string): string {
  return new Date(at).toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
}

/**
 * What answer the escalation needs (its kind in words, the options or the fields) and until
 * when: the expiry relative and absolute, and what happens if nobody answers by then.
 */
function AnswerNeeded({ escalation }: { escalation: EscalationSummaryData['escalation'] }) {
  return (
    <Stack gap={6} mt="sm" data-testid="answer-needed">
      <Text size="sm" fw={600} data-testid="escalation-kind">
        {kindInWords(escalation)}
      </Text>
      {escalation.options !== null && (
        <List size="sm" aria-label="Options" data-testid="escalation-options">
          {escalation.options.map((option) => (
            <List.Item key={option}>{option}</List.Item>
          ))}
        </List>
      )}
      {escalation.fields !== null && (
        <List size="sm" aria-label="Fields" data-testid="escalation-fields">
          {escalation.fields.map((field) => (
            <List.Item key={field.name}>
              {field.name}
              {field.secret ? ' (secret)' : ''}
            </List.Item>
          ))}
        </List>
      )}
      {escalation.status === 'pending' && (
        <Text size="sm" data-testid="escalation-expiry">
          Answer by {absoluteTime(escalation.expires_at)} (<RelativeTime at={escalation.expires_at} />
          ). If nobody answers by then, {timeoutInWords(escalation.on_timeout)}.
        </Text>
      )}
    </Stack>
  );
}

/** The question, the task's prompt and status (with its result once it ends), and its step timeline. */
export function EscalationSummary({ data }: { data: EscalationSummaryData }) {
  const { escalation, task } = data;
  return (
    <Stack gap="md">
      <Paper withBorder radius="md" p="md">
        <Text size="xs" tt="uppercase" fw={700} c="dimmed">
          Question
        </Text>
        <Title order={2} size="h3" mt={4} data-testid="escalation-question">
          {escalation.reason}
        </Title>
        <Group gap="xs" mt="sm">
          <Badge variant="light">{escalation.kind}</Badge>
          <span data-testid="escalation-status">
            <StatusBadge status={escalation.status} />
          </span>
          <Text size="sm" c="dimmed">
            {data.organization.name} · asked <RelativeTime at={escalation.created_at} />
          </Text>
        </Group>
        <AnswerNeeded escalation={escalation} />
      </Paper>
      <Paper withBorder radius="md" p="md">
        <Group justify="space-between">
          <Text size="xs" tt="uppercase" fw={700} c="dimmed">
            Task prompt
          </Text>
          <span data-testid="task-status">
            <StatusBadge status={task.status} />
          </span>
        </Group>
        <Code block mt="xs" style={{ whiteSpace: 'pre-wrap' }}>
          {task.prompt}
        </Code>
        {task.result !== null && task.result !== undefined && (
          <Text size="sm" mt="xs" data-testid="task-result">
            Result: {typeof task.result === 'string' ? task.result : JSON.stringify(task.result)}
          </Text>
        )}
      </Paper>
      <Paper withBorder radius="md" p="md">
        <Title order={2} size="h4" mb="sm">
          Steps
        </Title>
        <StepTimeline steps={data.steps} />
      </Paper>
    </Stack>
  );
}
