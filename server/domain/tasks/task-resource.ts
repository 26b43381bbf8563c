import { z } from 'zod';
import { taskCacheOutcomes, taskStatuses, terminalTaskStatuses, type TaskStatus, type tasks } from '../../../db/schema';
import { toPublicId } from '../ids';
import { iso, isoOrNull } from '../time';

export const TaskStatusSchema = z.enum(taskStatuses);

/** The Task resource exactly as the API returns it (spec "Task", CONTRACT.md statuses). */
export const TaskSchema = z.object({
  id: z.string(),
  object: z.literal('task'),
  device_id: z.string(),
  status: TaskStatusSchema,
  prompt: z.string(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
  /** null while running; the agent's answer on success; `{error, detail}` on failure. */
  result: z.json().nullable(),
  /** The JSON Schema a successful result matches, as submitted; null for none. */
  output_schema: z.record(z.string(), z.json()).nullable(),
  /** Steps a human confirms first, as submitted; null for none. */
  confirm_before: z.array(z.string()).nullable(),
  /** What the task's escalations do when they expire unanswered. */
  escalation_on_timeout: z.enum(['fail', 'continue']),
  /**
   * What the task has cost so far: steps recorded (as on its event stream), requests to the
   * model and the tokens the endpoint reported for them. Zeros for the offline planner.
   */
  usage: z.object({
    steps: z.number().int(),
    model_calls: z.number().int(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    /** Action steps carried out from the cache entry, with no model call. */
    replayed_steps: z.number().int(),
  }),
  /**
   * The task's cache key and what became of it (docs/api.md "Task caches"): `miss` (no entry
   * for its key and prompt: the planner ran, and a success stores the entry), `hit` (the
   * entry was replayed), `healed` (a replay the planner took over). null without a key.
   */
  cache: z.object({ key: z.string(), outcome: z.enum(taskCacheOutcomes) }).nullable(),
});
export type Task = z.infer<typeof TaskSchema>;

export type TaskRow = typeof tasks.$inferSelect;

/**
 * Whether the task's runs have stopped recording: only a running task records, and a
 * run's video is stored just after its end is written (task-runner.ts).
 */
export function taskStoppedRecording(task: TaskRow): boolean {
  return task.status !== 'running';
}

export function toTaskResource(row: TaskRow): Task {
  return {
    id: toPublicId('task', row.id),
    object: 'task',
    device_id: toPublicId('device', row.deviceId),
    status: row.status,
    prompt: row.prompt,
    created_at: iso(row.createdAt),
    finished_at: isoOrNull(row.finishedAt),
    result: (row.result ?? null) as Task['result'],
    output_schema: (row.outputSchema ?? null) as Task['output_schema'],
    confirm_before: row.confirmBefore,
    escalation_on_timeout: row.escalationOnTimeout,
    usage: { steps: row.stepCount, model_calls: row.modelCalls, input_tokens: row.inputTokens, output_tokens: row.outputTokens, replayed_steps: row.replayedSteps },
    cache: row.cacheKey === null ? null : { key: row.cacheKey, outcome: row.cacheOutcome ?? 'miss' },
  };
}

export function isTerminal(status: TaskStatus): boolean {
  return (terminalTaskStatuses as readonly TaskStatus[]).includes(status);
}
