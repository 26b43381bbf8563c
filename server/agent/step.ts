import { z } from 'zod';

/**
 * A step as the agent records it; the caller adds `seq`, `task_id` and `created_at` to make
 * the event-stream payload.
 *
 * - `action` steps: one per planner decision the agent carried out (every decision except
 *   `finish`). `action` is a short machine string (see describe-action.ts), `url`/`title`
 *   describe the page after the action, `note` is the planner's reason (for the offline
 *   planner, the instruction as written; null when the model gave none).
 * - `message` steps: `action` is `answer` (note: the result as text), `ask_human` (note: the
 *   question), `failed <code>` (note: the fixed detail sentence of that code), or
 *   `human_answer` (note: the answer to an escalation, written when it is resolved).
 * - `observation` steps: `reopen_page`, written when a task resumes on a browser that
 *   restarted while it was parked. The offline planner counts only `action` steps to know
 *   where to resume.
 */
export const StepTypeSchema = z.enum(['action', 'observation', 'message']);
export type StepType = z.infer<typeof StepTypeSchema>;

export const NewStepSchema = z.object({
  type: StepTypeSchema,
  action: z.string().nullable(),
  url: z.string().nullable(),
  title: z.string().nullable(),
  note: z.string().nullable(),
});
export type NewStep = z.infer<typeof NewStepSchema>;

/**
 * A step already stored for the task, handed back when a task resumes. Stored rows carry more
 * fields (seq, created_at, ...); the agent reads only these, so any such row fits.
 */
export type RecordedStep = NewStep;
