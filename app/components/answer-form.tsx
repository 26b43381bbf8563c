'use client';

import { Button, Checkbox, Group, Paper, PasswordInput, Radio, Stack, Text, Textarea, Title } from '@mantine/core';
import { useEffect, useState, type ReactNode } from 'react';
import { checkAnswer, FREE_TEXT_MAX_CHARS, type AnswerShape } from '../../shared/answer-schema';
import { ErrorAlert } from './error-alert';
import type { AnswerableEscalation } from './escalation-kind';

/** An answer as the console API takes it: text ('' for none), true/false, options, or credentials fields. */
export type AnswerValue = string | boolean | string[] | Record<string, string>;

/** Sends the answer; `cleared: false` stops the task instead. Rejects with the server's refusal. */
export type SendAnswer = (answer: AnswerValue, cleared: boolean) => Promise<void>;

function shapeOf(escalation: AnswerableEscalation): AnswerShape {
  return { kind: escalation.kind, options: escalation.options, multiple: escalation.multiple, fields: escalation.fields?.map((field) => field.name) ?? null };
}

function messageOf(failure: unknown): string {
  return failure instanceof Error ? failure.message : 'The answer was not sent.';
}

/**
 * The answer to an escalation, with the input its kind needs: text for a question (and the
 * older free-text kinds), radio buttons or checkboxes for a choice, Yes / No for a
 * confirmation, one password field per credentials field, and for a takeover the way to
 * finish it. The answer is checked on the page with the server's own `checkAnswer`, and a
 * refusal from the server shows in place.
 */
export function AnswerForm({ escalation, onAnswer }: { escalation: AnswerableEscalation; onAnswer: SendAnswer }) {
  const [pending, setPending] = useState<'answer' | 'stop' | 'yes' | 'no' | null>(null);
  const [error, setError] = useState<string | null>(null);

  const send = async (which: 'answer' | 'stop' | 'yes' | 'no', answer: AnswerValue, cleared: boolean): Promise<boolean> => {
    setPending(which);
    setError(null);
    try {
      await onAnswer(answer, cleared);
      return true;
    } catch (failure) {
      setError(messageOf(failure));
      return false;
    } finally {
      setPending(null);
    }
  };

  const stop = (
    <Button variant="subtle" color="red" onClick={() => void send('stop', '', false)} loading={pending === 'stop'} disabled={pending !== null}>
      Stop the task instead
    </Button>
  );
  const refusal = error !== null && <ErrorAlert message={error} title="Not sent" />;
  const shape = shapeOf(escalation);

  let body: ReactNode;
  switch (escalation.kind) {
    case 'confirm':
      body = (
        <>
          <Text size="sm">
            <strong>Yes, go ahead</strong> lets the agent carry on with the step. <strong>No, stop</strong> ends the task: it fails with{' '}
            <code>confirmation_declined</code> and the step never runs.
          </Text>
          {refusal}
          <Group justify="flex-end">
            <Button color="red" variant="outline" onClick={() => void send('no', false, true)} loading={pending === 'no'} disabled={pending !== null}>
              No, stop
            </Button>
            <Button onClick={() => void send('yes', true, true)} loading={pending === 'yes'} disabled={pending !== null}>
              Yes, go ahead
            </Button>
          </Group>
        </>
      );
      break;
    case 'choice':
      body = <ChoiceInput shape={shape} busy={pending} refusal={refusal} stop={stop} send={send} />;
      break;
    case 'credentials':
      body = <CredentialsInput shape={shape} busy={pending} refusal={refusal} stop={stop} send={send} />;
      break;
    case 'takeover':
      body = (
        <>
          <Text size="sm" data-testid="takeover-instructions">
            Press <strong>Take over</strong> in the live view below, do on the device’s page what the question asks, then press <strong>Release</strong>: the
            task resumes. If you are already done on the page, say so here.
          </Text>
          {refusal}
          <Group justify="flex-end">
            {stop}
            <Button onClick={() => void send('answer', '', true)} loading={pending === 'answer'} disabled={pending !== null}>
              Done: resume the task
            </Button>
          </Group>
        </>
      );
      break;
    default:
      body = <TextInput shape={shape} busy={pending} refusal={refusal} stop={stop} send={send} />;
  }

  return (
    <Paper withBorder radius="md" p="md" aria-labelledby="answer-form-title" component="section" data-testid="answer-form" data-kind={escalation.kind}>
      <Stack gap="sm">
        <Title order={2} size="h4" id="answer-form-title">
          Answer
        </Title>
        {body}
      </Stack>
    </Paper>
  );
}

interface InputProps {
  shape: AnswerShape;
  busy: string | null;
  refusal: ReactNode;
  stop: ReactNode;
  send: (which: 'answer', answer: AnswerValue, cleared: boolean) => Promise<boolean>;
}

/** A form whose submit checks the answer with `checkAnswer` first and shows why it does not fit. */
function AnswerFields({ label, shape, value, busy, refusal, stop, send, onSent, children }: InputProps & { label: string; value: AnswerValue; onSent?: () => void; children: (problem: string | null) => ReactNode }) {
  const [problem, setProblem] = useState<string | null>(null);
  // A changed answer is checked again on the next send; until then, no stale refusal.
  const [checked, setChecked] = useState(value);
  if (checked !== value) {
    setChecked(value);
    setProblem(null);
  }
  return (
    <form
      aria-label={label}
      autoComplete="off"
      onSubmit={(event) => {
        event.preventDefault();
        const check = checkAnswer(shape, value === '' ? undefined : value);
        setProblem(check.ok ? null : check.message);
        if (check.ok) void send('answer', value, true).then((sent) => sent && onSent?.());
      }}
    >
      <Stack gap="sm">
        {children(problem)}
        {refusal}
        <Group justify="flex-end">
          {stop}
          <Button type="submit" loading={busy === 'answer'} disabled={busy !== null}>
            Send answer
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function TextInput(props: InputProps) {
  const [answer, setAnswer] = useState('');
  return (
    <AnswerFields {...props} label="Answer" value={answer}>
      {(problem) => (
        <Textarea
          label="Your answer"
          description="The task resumes with it. Leave it empty if you passed the wall on the page yourself."
          autosize
          minRows={2}
          maxLength={FREE_TEXT_MAX_CHARS}
          value={answer}
          error={problem}
          onChange={(event) => setAnswer(event.currentTarget.value)}
        />
      )}
    </AnswerFields>
  );
}

function ChoiceInput(props: InputProps) {
  const options = props.shape.options ?? [];
  const [one, setOne] = useState<string | null>(null);
  const [several, setSeveral] = useState<string[]>([]);
  const multiple = props.shape.multiple === true;
  const value: AnswerValue = multiple ? several : (one ?? '');
  return (
    <AnswerFields {...props} label="Answer" value={value}>
      {(problem) =>
        multiple ? (
          <Checkbox.Group label="Pick one or more options" value={several} onChange={setSeveral} error={problem} withAsterisk>
            <Stack gap="xs" mt="xs">
              {options.map((option) => (
                <Checkbox key={option} value={option} label={option} />
              ))}
            </Stack>
          </Checkbox.Group>
        ) : (
          <Radio.Group label="Pick one option" value={one} onChange={setOne} error={problem} withAsterisk>
            <Stack gap="xs" mt="xs">
              {options.map((option) => (
                <Radio key={option} value={option} label={option} />
              ))}
            </Stack>
          </Radio.Group>
        )
      }
    </AnswerFields>
  );
}

/**
 * One password field per credentials field. The values live in this component's state
 * only (never a URL, storage or the page's history), are emptied once sent, and go with the
 * component when the page moves on.
 */
function CredentialsInput(props: InputProps) {
  const fields = props.shape.fields ?? [];
  const [values, setValues] = useState<Record<string, string>>({});
  useEffect(() => () => setValues({}), []);
  return (
    <AnswerFields {...props} label="Answer" value={values} onSent={() => setValues({})}>
      {(problem) => (
        <>
          <Text size="sm">The values go to the agent’s typing only: they are never shown again, stored in clear or written to the task’s steps.</Text>
          {fields.map((field) => (
            <PasswordInput
              key={field}
              label={field}
              required
              autoComplete="off"
              value={values[field] ?? ''}
              onChange={(event) => {
                const text = event.currentTarget.value;
                setValues((current) => ({ ...current, [field]: text }));
              }}
            />
          ))}
          {problem !== null && (
            <Text size="sm" c="red.8" role="alert">
              {problem}
            </Text>
          )}
        </>
      )}
    </AnswerFields>
  );
}
