import { DomainAllowList } from '../../browser/domain-allowlist';
import type { PageDriver, PageObservation } from '../../browser/types';
import type { AgentAction } from '../agent-action';
import { correctionAction } from '../correction';
import type { Planner, PlannerDecision, PlannerInput, PlannerRejection } from '../planner';
import type { RecordedStep } from '../step';
import { describeAction } from '../step-text';
import { pageKey, type CachedAction, type CachedStep } from './cached-step';
import { healContext } from './heal-context';

/** The cache of one task's run, as the task runner found it. */
export interface CacheRun {
  /** The entry to replay; null on a miss (the run only records). */
  entry: readonly CachedStep[] | null;
  /** A run of a task whose replay already handed over to the planner (before an escalation). */
  healing: boolean;
  /** Called once when the replay hands over to the planner: the task's outcome becomes `healed`. */
  onHeal(): Promise<void>;
}

/**
 * The planner of a task with a cache key. With an entry it replays it, one step per call and
 * no model call: each step's target is found on the live page by its fingerprint, and the
 * page must be the one the step was taken on. When a target is missing or ambiguous, the
 * page is another, a replayed action failed, or a navigation would leave the task's
 * allowed domains, `planner` takes over from that step for the rest of the run, with the
 * entry as context; with the offline planner, whose place is its count of action steps,
 * that re-runs the instruction of the step that failed. Every decision it hands on carries
 * the step as an entry would store it (targets fingerprinted before they are acted on).
 *
 * The replay's place is the count of replayed action steps in the history, so a run resumed
 * after an escalation (a credentials question asked again by the replay) continues there.
 */
export function cachingPlanner(planner: Planner, driver: PageDriver, allowedDomains: string[] | null, run: CacheRun): Planner {
  const allowList = DomainAllowList.fromEntries(allowedDomains);
  let healing = run.entry === null || run.healing;
  return {
    wantsScreenshots: planner.wantsScreenshots,
    observesElements: planner.observesElements,
    maxCorrections: planner.maxCorrections,
    async next(input: PlannerInput): Promise<PlannerDecision | PlannerRejection> {
      const position = replayedSteps(input.history);
      if (!healing && run.entry !== null) {
        const step = lastFailedReplay(input.history) ? undefined : run.entry[position];
        const replayed = step === undefined ? null : await replay(step, input.observation);
        if (replayed !== null) return replayed;
        healing = true;
        await run.onHeal();
      }
      const context = run.entry === null ? undefined : healContext(run.entry, position);
      const decision = await planner.next(context === undefined ? input : { ...input, context });
      if ('rejected' in decision) return decision;
      return { ...decision, cache: { step: await toCachedStep(decision.action, input.observation, decision.note), replayed: false } };
    },
  };

  /** The step as a decision for the page as it is now; null when the page no longer fits it. */
  async function replay(step: CachedStep, page: PageObservation): Promise<PlannerDecision | null> {
    const { action } = step;
    if (action.kind === 'navigate') {
      if (allowList !== null && !allowList.allowsUrl(action.url)) return null;
    } else if (pageKey(page.url) !== step.page) {
      return null;
    }
    const live = await liveAction(action);
    return live === null ? null : { action: live, note: step.note, cache: { step, replayed: true } };
  }

  async function liveAction(action: CachedAction): Promise<AgentAction | null> {
    switch (action.kind) {
      case 'click':
      case 'download': {
        const found = await driver.locate(action.target);
        return found.status === 'found' ? { kind: action.kind, target: found.target } : null;
      }
      case 'type': {
        const found = await driver.locate(action.into);
        return found.status === 'found' ? { kind: 'type', text: action.text, into: found.target } : null;
      }
      default:
        return action;
    }
  }

  /** The decision as an entry stores it; null when a target cannot be fingerprinted. */
  async function toCachedStep(action: AgentAction, page: PageObservation, note: string | null): Promise<CachedStep | null> {
    const cached = await cachedAction(action);
    if (cached === null) return null;
    return { action: cached, described: action.kind === 'finish' ? 'finish' : describeAction(action, page), note, page: pageKey(page.url) };
  }

  async function cachedAction(action: AgentAction): Promise<CachedAction | null> {
    // A target the driver cannot find fails the action itself; nothing is stored for it.
    const fingerprint = (target: Parameters<PageDriver['fingerprint']>[0], purpose: 'click' | 'field') => driver.fingerprint(target, purpose).catch(() => null);
    switch (action.kind) {
      case 'click':
      case 'download': {
        const target = await fingerprint(action.target, 'click');
        return target === null ? null : { kind: action.kind, target };
      }
      case 'type': {
        const into = await fingerprint(action.into, 'field');
        return into === null ? null : { kind: 'type', text: action.text, into };
      }
      default:
        return action;
    }
  }
}

/** Action steps carried out from the entry so far: the replay's place in it. */
function replayedSteps(history: readonly RecordedStep[]): number {
  return history.filter((step) => step.type === 'action' && step.replayed === true).length;
}

/**
 * Whether the run's last step is a correction of a failed replayed action (a model planner
 * is told about it and asked again): the planner takes over rather than replaying it again.
 */
function lastFailedReplay(history: readonly RecordedStep[]): boolean {
  const last = history.at(-1);
  return last?.type === 'correction' && last.action !== correctionAction('repeated_action');
}
