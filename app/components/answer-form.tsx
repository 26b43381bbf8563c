'use client';

import { Button, Checkbox, Group, Paper, Stack, Textarea, Title } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from './error-alert';

/** The answer to an escalation: text, and whether the wall is down (unchecked fails the task). */
export function AnswerForm({ onAnswer, disabled }: { onAnswer: (answer: string, cleared: boolean) => Promise<void>; disabled?: boolean }) {
  const [answer, setAnswer] = useState('');
  const [cleared, setCleared] = useState(true);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <Paper withBorder radius="md" p="md" component="form" aria-label="Answer" onSubmit={(event) => {
      event.preventDefault();
      setPending(true);
      setError(null);
      onAnswer(answer, cleared).then(
        () => setPending(false),
        (failure: unknown) => {
          setPending(false);
          setError(failure instanceof Error ? failure.message : 'The answer was not sent.');
        },
      );
    }}>
      <Stack gap="sm">
        <Title order={2} size="h4">
          Answer
        </Title>
        <Textarea label="Your answer" description="The task resumes with it. Leave it empty if you passed the wall on the page yourself." autosize minRows={2} maxLength={20000} value={answer} onChange={(event) => setAnswer(event.currentTarget.value)} disabled={disabled} />
        <Checkbox label="The task can go on (unchecked: the task fails)" checked={cleared} onChange={(event) => setCleared(event.currentTarget.checked)} disabled={disabled} />
        {error !== null && <ErrorAlert message={error} title="Not sent" />}
        <Group justify="flex-end">
          <Button type="submit" loading={pending} disabled={disabled}>
            Send answer
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
