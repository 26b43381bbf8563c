import type { PageObservation } from '../browser/types';
import type { AgentAction } from './agent-action';
import type { NewStep } from './step';

export interface PlannerInput {
  /** The task prompt, unchanged. */
  prompt: string;
  /** The page as it is now. */
  observation: PageObservation;
  /** Every step of the task so far, resumed ones first, in order. */
  history: readonly NewStep[];
  /** Aborted when the task is canceled or runs out of time; planners stop their I/O on it. */
  signal: AbortSignal;
}

export interface PlannerDecision {
  action: AgentAction;
  /** Why, in words; becomes the `note` of the recorded step. */
  note: string | null;
}

export interface Planner {
  /** Whether observations handed to `next` should carry a screenshot. */
  readonly wantsScreenshots: boolean;
  /** Decides the next action. Throws PlannerError when it cannot. */
  next(input: PlannerInput): Promise<PlannerDecision>;
}

/** The failure codes a planner may end a task with. */
export type PlannerErrorCode = 'planner_error' | 'planner_unsupported';

/**
 * Typed planner failure. `planner_unsupported`: the offline planner cannot parse the prompt.
 * `planner_error`: the model endpoint failed or answered with something unusable. The message
 * is for logs only; the task result carries the fixed detail of `code`.
 */
export class PlannerError extends Error {
  constructor(
    readonly code: PlannerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PlannerError';
  }
}
