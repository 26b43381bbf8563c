import type { ActionTarget, TargetFingerprint } from '../../browser/types';
import type { AgentAction } from '../agent-action';

/**
 * One decision of a task cache entry (docs/api.md, "Task caches"): the action as it was
 * carried out, each element it acted on as a fingerprint instead of a ref or a text, with
 * what the step said. Typed text is kept as the planner wrote it, so a credential typed as
 * `{{password}}` or `{{vault:<name>.password}}` is stored as that placeholder and filled
 * afresh when it is replayed; its value is never stored.
 */
export interface CachedStep {
  action: CachedAction;
  /** The recorded step's `action` text, repeated on the replayed step. */
  described: string;
  /** The recorded step's note (the planner's reason, or the offline instruction). */
  note: string | null;
  /** Where the decision was taken (pageKey): replay expects to be there before acting. */
  page: string;
}

/**
 * The kinds of action that act on an element. They are stored only with a fingerprint: a new
 * kind with a `target` or `into` falls out of CachedAction's first member, so
 * caching-planner.ts does not compile until it fingerprints and locates it too.
 */
type ElementActionKind = Extract<AgentAction, { target: ActionTarget } | { into: ActionTarget }>['kind'];

export type CachedAction =
  | Exclude<AgentAction, { kind: ElementActionKind }>
  | { kind: 'click'; target: TargetFingerprint }
  | { kind: 'download'; target: TargetFingerprint }
  | { kind: 'type'; text: string; into: TargetFingerprint };

/**
 * The page a URL shows, as replay compares it: origin and path. The query and fragment are
 * left out, since they often hold what changes between runs (a session, a timestamp).
 */
export function pageKey(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  return parsed.origin === 'null' ? `${parsed.protocol}${parsed.pathname}` : `${parsed.origin}${parsed.pathname}`;
}
