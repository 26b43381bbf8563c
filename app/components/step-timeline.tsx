'use client';

import { Anchor, Badge, Code, Group, Image, Text, Timeline } from '@mantine/core';
import { RelativeTime } from './relative-time';

/** One step of a task as the API's step payload carries it (CONTRACT.md), with its screenshot when there is one. */
export type TimelineStep = {
  seq: number;
  type: string;
  action: string | null;
  url: string | null;
  title: string | null;
  note: string | null;
  created_at: string;
  screenshot_url?: string | null;
  /** Carried out from the task's cache entry, with no model call. */
  replayed?: boolean;
};

const TYPE_COLOURS: Record<string, string> = { action: 'indigo', observation: 'gray', message: 'teal' };

/** A task's steps, first to last: what the agent did, saw and said, each at its time and page. */
export function StepTimeline({ steps }: { steps: TimelineStep[] }) {
  if (steps.length === 0) {
    return (
      <Text c="dimmed" size="sm">
        No steps yet.
      </Text>
    );
  }
  return (
    <Timeline active={steps.length - 1} bulletSize={22} lineWidth={2} aria-label="Steps">
      {steps.map((step) => (
        <Timeline.Item
          key={step.seq}
          bullet={
            <Text size="xs" fw={700} component="span">
              {step.seq}
            </Text>
          }
          title={
            <Group gap="xs" wrap="nowrap">
              <Badge size="sm" variant="light" color={TYPE_COLOURS[step.type] ?? 'gray'}>
                {step.type}
              </Badge>
              {step.action !== null && <Code>{step.action}</Code>}
              {step.replayed === true && (
                <Badge size="sm" variant="outline" color="gray">
                  replayed
                </Badge>
              )}
              <Text size="xs" c="dimmed" component="span">
                <RelativeTime at={step.created_at} />
              </Text>
            </Group>
          }
        >
          {step.note !== null && (
            <Text size="sm" mt={4}>
              {step.note}
            </Text>
          )}
          {(step.title !== null || step.url !== null) && (
            <Text size="xs" c="dimmed" mt={2} truncate="end" maw="60ch">
              {step.title ?? ''}
              {step.title !== null && step.url !== null && ' · '}
              {step.url !== null && (
                <Anchor href={step.url} target="_blank" rel="noreferrer noopener" size="xs">
                  {step.url}
                </Anchor>
              )}
            </Text>
          )}
          {step.screenshot_url != null && (
            // The thumbnail is the full image scaled down; the link opens it full size in a
            // new tab (a focusable link: Enter opens it). Lazy: a long timeline loads what is seen.
            <Anchor href={step.screenshot_url} target="_blank" rel="noopener" display="inline-block" mt="xs" aria-label={`Screenshot of the page after step ${step.seq}, full size (opens in a new tab)`}>
              <Image
                src={step.screenshot_url}
                alt=""
                loading="lazy"
                w={240}
                h={150}
                fit="cover"
                radius="sm"
                data-testid="step-screenshot"
                style={{ border: '1px solid var(--mantine-color-gray-3)' }}
              />
            </Anchor>
          )}
        </Timeline.Item>
      ))}
    </Timeline>
  );
}
