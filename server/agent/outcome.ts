import type { HelpRequest } from './agent-action';
import type { FailureCode } from './failures';
import type { JsonValue } from './json-value';

/** How one run of the agent ended. */
export type AgentOutcome =
  | { status: 'succeeded'; result: JsonValue }
  | { status: 'failed'; error: FailureCode }
  | ({ status: 'needs_human'; question: string } & HelpRequest)
  | { status: 'canceled' };
