import { z } from 'zod';
import type { CachedStep } from './replay/cached-step';

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
 * - `observation` steps, written by the service, not the agent: `handed_over` (the run's
 *   service stopped for a restart after its last step) and `driver_lost` (it died mid-run;
 *   an action cut off before it was recorded is carried out again). The offline planner
 *   counts only `action` steps to know where to resume.
 * - `correction` steps: a model reply that could not be carried out (no tool call, several,
 *   an unknown tool, invalid arguments), a page action that failed in a way the model can
 *   fix (element not found, navigation failed), or a warning that it repeated one action.
 *   `action` is `correction <reason>`, `note` the fixed sentence the model was told
 *   (correction.ts); never the model's own output.
 * - `replayed`: an `action` step carried out from the task's cache entry (replay/).
 */
export const StepTypeSchema = z.enum(['action', 'observation', 'message', 'correction']);
export type StepType = z.infer<typeof StepTypeSchema>;

export const NewStepSchema = z.object({
  type: StepTypeSchema,
  action: z.string().nullable(),
  url: z.string().nullable(),
  title: z.string().nullable(),
  note: z.string().nullable(),
});
export type NewStep = z.infer<typeof NewStepSchema> & {
  /** Carried out from the task's cache entry, with no planner (the payload's `replayed`). */
  replayed?: boolean;
  /**
   * For a task with a cache key: the decision as its entry would store it (an `action`
   * step's, and the `answer` step's when a `finish` ended the run); null when its target
   * could not be fingerprinted. Not part of the payload.
   */
  cache?: CachedStep | null;
};

/**
 * A step already stored for the task, handed back when a task resumes. Stored rows carry more
 * fields (seq, created_at, ...); the agent reads only these, so any such row fits.
 */
export type RecordedStep = NewStep;
