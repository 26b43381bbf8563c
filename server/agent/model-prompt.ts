import type { PageObservation } from '../browser/types';
import type { NewStep } from './step';

/** The fixed instructions of the model planner; the per-step facts go in the user message. */
export const MODEL_SYSTEM_PROMPT = `You operate one web browser page to complete a task for a user.
Each turn you get the task, the steps taken so far and the current page: its URL, its title and its
interactive elements, each with a numeric ref. Call exactly one tool per turn.
- Target an element by its ref number when it is listed; otherwise by its visible text or a CSS selector.
- When the task is done, call finish with the answer, or extract_title, extract_url or extract_text
  when the answer is exactly the page title, the page URL or an element's text.
- Call ask_human when only a person can continue: a choice the task leaves open, credentials, a captcha.
  The person's reply appears in the steps as a human_answer message; act on it.
- Never guess a password or other secret, and stay on the sites the task is about.`;

/** Most steps the model is shown; older ones are summarised as a count to bound the request. */
export const MAX_HISTORY_STEPS = 40;

/** Renders the task, a compact history and the observation as one user message. */
export function renderPlannerMessage(prompt: string, history: readonly NewStep[], page: PageObservation): string {
  const shown = history.slice(-MAX_HISTORY_STEPS);
  const omitted = history.length - shown.length;
  const stepLines = shown.map((step, index) => `${omitted + index + 1}. ${renderStep(step)}`);
  if (omitted > 0) stepLines.unshift(`(${omitted} earlier steps not shown)`);

  const elementLines = page.elements.map((element) => {
    const value = element.value === undefined ? '' : ` value=${JSON.stringify(element.value)}`;
    return `[${element.ref}] ${element.role} ${JSON.stringify(element.name)}${value}`;
  });

  // The model is told what was wrong with its last reply after the page, where it reads last.
  const last = history.at(-1);
  const correction = last?.type === 'correction' && last.note !== null ? ['', `Correction: ${last.note}`] : [];

  return [
    `Task: ${prompt}`,
    '',
    'Steps so far:',
    ...(stepLines.length === 0 ? ['(none)'] : stepLines),
    '',
    'Current page:',
    `URL: ${page.url}`,
    `Title: ${page.title}`,
    'Interactive elements ([ref] role "name"):',
    ...(elementLines.length === 0 ? ['(none)'] : elementLines),
    ...correction,
  ].join('\n');
}

function renderStep(step: NewStep): string {
  const parts: string[] = [step.type];
  if (step.action !== null) parts.push(step.action);
  if (step.note !== null) parts.push(`(${step.note})`);
  return parts.join(': ');
}
