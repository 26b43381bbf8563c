import type { CachedStep } from './cached-step';

/** Most entry steps shown to a model while it heals; the rest are counted. */
const SHOWN_STEPS = 40;

/**
 * What a model is told while it takes over a replay: the steps of the run the entry
 * recorded, and the step at which the page stopped matching. Only the steps' own texts
 * (what the recorded steps said), never a stored value beyond them.
 */
export function healContext(entry: readonly CachedStep[], failedAt: number): string {
  const lines = entry.slice(0, SHOWN_STEPS).map((step, index) => `${index + 1}. ${step.described}`);
  if (entry.length > SHOWN_STEPS) lines.push(`(${entry.length - SHOWN_STEPS} more steps not shown)`);
  return [
    `An earlier run of this task succeeded with the steps below. Steps 1 to ${failedAt} were repeated on this page; step ${failedAt + 1} no longer fits the page (its element is gone or changed), so carry on from there on the page as it is now:`,
    ...lines,
  ].join('\n');
}
