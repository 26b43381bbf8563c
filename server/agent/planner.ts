import type { PageObservation } from '../browser/types';
import type { AgentAction } from './agent-action';
import type { CorrectionReason } from './correction';
import type { ModelCallUsage } from './model-usage';
import type { CachedStep } from './replay/cached-step';
import type { NewStep } from './step';
import type { VaultEntry } from './vault-fill';

export interface PlannerInput {
  /** The task prompt, unchanged. */
  prompt: string;
  /** The page as it is now. */
  observation: PageObservation;
  /** Every step of the task so far, resumed ones first, in order. */
  history: readonly NewStep[];
  /** The task's output_schema (JSON Schema), or null: a model is asked for an answer that matches it. */
  outputSchema: object | null;
  /** Phrases or selectors of steps a human must confirm first, or null. */
  confirmBefore: readonly string[] | null;
  /** The credentials of the task's Space a planner may fill (names and domains, never values); absent: none. */
  vaultEntries?: readonly VaultEntry[];
  /** Aborted when the task is canceled or runs out of time; planners stop their I/O on it. */
  signal: AbortSignal;
  /**
   * What a model should know beyond the task: while a replay heals, the steps of the cache
   * entry and where the page stopped matching them (replay/heal-context.ts). Absent otherwise.
   */
  context?: string;
}

export interface PlannerDecision {
  action: AgentAction;
  /** Why, in words; becomes the `note` of the recorded step. */
  note: string | null;
  /** The model request this decision cost; absent for planners that call no model. */
  usage?: ModelCallUsage;
  /**
   * For a task with a cache key (replay/caching-planner.ts): the decision as the entry
   * stores it (null when it cannot be stored), and whether it was replayed from the entry.
   */
  cache?: { step: CachedStep | null; replayed: boolean };
}

/** A model reply that cannot be carried out; the agent tells the model why and asks again. */
export interface PlannerRejection {
  rejected: CorrectionReason;
  usage?: ModelCallUsage;
}

export interface Planner {
  /** Whether observations handed to `next` should carry a screenshot. */
  readonly wantsScreenshots: boolean;
  /**
   * Whether `next` reads the page's elements (a model does). Without, an observation is
   * only the URL and title: the walk of the page that lists its elements is skipped.
   */
  readonly observesElements: boolean;
  /**
   * How many bad replies or failed page actions in a row the planner may be told about and
   * retry; the next one fails the task. 0 (the offline planner, which would only repeat
   * itself) fails at the first, and also turns off loop detection: an instruction list may
   * repeat an action on purpose.
   */
  readonly maxCorrections: number;
  /** Decides the next action. Throws PlannerError when it cannot. */
  next(input: PlannerInput): Promise<PlannerDecision | PlannerRejection>;
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
