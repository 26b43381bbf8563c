'use client';

import { Badge, Code, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { RelativeTime } from './relative-time';
import { StatusBadge } from './status-badge';
import { StepTimeline, type TimelineStep } from './step-timeline';

export type EscalationSummaryData = {
  escalation: { id: string; reason: string; kind: string; status: string; created_at: string; expires_at: string; answer: unknown; resolved_by: string | null };
  organization: { name: string };
  task: { id: string; prompt: string; status: string; result: unknown };
  steps: TimelineStep[];
};


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
            {data.organization.name} · asked <RelativeTime at={escalation.created_at} /> · expires <RelativeTime at={escalation.expires_at} />
          </Text>
        </Group>
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
