import type { PageObservation } from '../browser/types';
import type { AgentAction } from './agent-action';
import type { NewStep } from './step';

/** The `action` of the message step written when the agent stops to have a step confirmed; its note is the step. */
export const CONFIRM_REQUEST_ACTION = 'confirm_request';

/**
 * Whether `action` is a step the task's `confirm_before` marks as consequential and no human
 * has confirmed yet. A step matches when one of the phrases appears (ignoring case) in what
 * it acts on: a click's or a typing's target (its text or selector, and for an element ref
 * the element's name as observed), a navigation's URL, a pressed key. It counts as
 * confirmed when a human said yes (a no fails the task, so an answer is a yes) just before
 * it, with no other action carried out since: to the agent's own stop for this very step
 * (a `confirm_request` naming it), or to a confirm the planner itself asked for as its last
 * action. A yes covers one step once.
 */
export function confirmationNeeded(
  confirmBefore: readonly string[] | null,
  action: Exclude<AgentAction, { kind: 'finish' }>,
  page: PageObservation,
  history: readonly NewStep[],
  described: string,
): boolean {
  if (confirmBefore === null || confirmBefore.length === 0) return false;
  const subjects = subjectsOf(action, page).map((subject) => subject.toLowerCase());
  const matches = confirmBefore.some((phrase) => {
    const needle = phrase.trim().toLowerCase();
    return needle !== '' && subjects.some((subject) => subject.includes(needle));
  });
  return matches && !confirmedJustNow(history, described);
}

function subjectsOf(action: Exclude<AgentAction, { kind: 'finish' }>, page: PageObservation): string[] {
  const target = (value: string | { ref: number }): string[] => {
    if (typeof value === 'string') return [value];
    const element = page.elements.find((candidate) => candidate.ref === value.ref);
    return element === undefined ? [] : [element.name];
  };
  switch (action.kind) {
    case 'click':
      return target(action.target);
    case 'type':
      return target(action.into);
    case 'navigate':
      return [action.url];
    case 'press':
      return [action.key];
    default:
      return [];
  }
}

function confirmedJustNow(history: readonly NewStep[], described: string): boolean {
  let answered = false;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    const step = history[index]!;
    if (step.type === 'action') return answered && step.action !== null && step.action.startsWith('ask_human confirm ');
    if (step.type === 'message' && step.action === 'human_answer') answered = true;
    if (step.type === 'message' && step.action === CONFIRM_REQUEST_ACTION) return answered && step.note === described;
  }
  return false;
}
