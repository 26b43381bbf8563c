import type { PageObservation } from '../browser/types';
import type { NewStep } from './step';
import { charsForTokens, estimateTokens } from './token-estimate';

/** The fixed instructions of the model planner; the per-step facts go in the user message. */
export const MODEL_SYSTEM_PROMPT = `You operate one web browser page to complete a task for a user.
Each turn you get the task, the steps taken so far and the current page: its URL, its title and its
interactive elements, each with a numeric ref. Call exactly one tool per turn.
- Target an element by its ref number when it is listed; otherwise by its visible text or a CSS selector.
- When the task is done, call finish with the answer, or extract_title, extract_url or extract_text
  when the answer is exactly the page title, the page URL or an element's text.
- Call ask_human when only a person can continue; ask_human_choice for a choice the task leaves open,
  ask_human_credentials for a password or code, ask_human_takeover for a captcha or anything only a
  person can do in the page. The person's reply appears in the steps as a human_answer message; act on it.
- Before a consequential step (a purchase, a submit, anything the task says to confirm) call
  ask_human_confirm; a no ends the task. Steps the task marks are stopped for confirmation anyway.
- A secret the person gave is typed with the type tool and the text {{<field>}}; you never see it.
- A credential the task lists is filled with fill_credential (username, password, totp or code); you never see it.
- Never guess a password or other secret, and stay on the sites the task is about.`;

/** Newest steps shown with their whole note; older ones are cut to one short line each. */
export const FULL_RECENT_STEPS = 5;
const SUMMARY_LINE_CHARS = 160;
const RECENT_LINE_CHARS = 1_000;
/** Page text caps: one element's name or value, the title, the URL. */
const ELEMENT_TEXT_CHARS = 100;
const TITLE_CHARS = 200;
const URL_CHARS = 500;
/** Share of the budget the task prompt may take; a longer prompt is cut. */
const PROMPT_SHARE = 0.4;

/**
 * Renders the task, a compact history and the observation as one user message of at most
 * `budgetTokens` (token-estimate.ts). What gives way, in order: older steps are one line
 * each (at most 160 characters); the oldest are left out, with a count, when the rest does
 * not fit; page text is capped (element names and values, title, URL), and only when the
 * page alone would not fit are its last elements left out. The newest steps keep their
 * whole note.
 */
export function renderPlannerMessage(prompt: string, history: readonly NewStep[], page: PageObservation, budgetTokens: number): string {
  const task = `Task: ${clamp(prompt, charsForTokens(Math.floor(budgetTokens * PROMPT_SHARE)))}`;
  // The model is told what was wrong with its last reply after the page, where it reads last.
  const last = history.at(-1);
  const correction = last?.type === 'correction' && last.note !== null ? ['', `Correction: ${last.note}`] : [];

  const fixedChars = join([task, '', 'Steps so far:', '', ...correction]).length;
  const pageLines = renderPage(page, charsForTokens(budgetTokens) - fixedChars - MIN_HISTORY_CHARS);
  const historyChars = charsForTokens(budgetTokens) - fixedChars - join(pageLines).length - 2;
  const stepLines = renderHistory(history, historyChars);

  const text = join([task, '', 'Steps so far:', ...stepLines, '', ...pageLines, ...correction]);
  return estimateTokens(text) <= budgetTokens ? text : clamp(text, charsForTokens(budgetTokens));
}

/** Room kept for the history however large the page: the newest step and the omission count. */
const MIN_HISTORY_CHARS = RECENT_LINE_CHARS + 100;

function renderHistory(history: readonly NewStep[], maxChars: number): string[] {
  if (history.length === 0) return ['(none)'];
  const lines: string[] = [];
  let used = 0;
  // Newest first, so what is left out is always the oldest.
  for (let index = history.length - 1; index >= 0; index -= 1) {
    const recent = index >= history.length - FULL_RECENT_STEPS;
    const line = clamp(`${index + 1}. ${renderStep(history[index]!)}`, recent ? RECENT_LINE_CHARS : SUMMARY_LINE_CHARS);
    const omission = index > 0 ? OMISSION_CHARS : 0;
    if (used + line.length + 1 + omission > maxChars) {
      lines.push(`(${index + 1} earlier steps not shown)`);
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines.reverse();
}

const OMISSION_CHARS = '(100000 earlier steps not shown)\n'.length;

function renderPage(page: PageObservation, maxChars: number): string[] {
  const head = ['Current page:', `URL: ${clamp(page.url, URL_CHARS)}`, `Title: ${clamp(page.title, TITLE_CHARS)}`, 'Interactive elements ([ref] role "name"):'];
  const elementLines = page.elements.map((element) => {
    const value = element.value === undefined ? '' : ` value=${JSON.stringify(clamp(element.value, ELEMENT_TEXT_CHARS))}`;
    return `[${element.ref}] ${element.role} ${JSON.stringify(clamp(element.name, ELEMENT_TEXT_CHARS))}${value}`;
  });
  if (elementLines.length === 0) return [...head, '(none)'];
  let used = join(head).length + OMISSION_CHARS;
  const shown: string[] = [];
  for (const line of elementLines) {
    if (used + line.length + 1 > maxChars) break;
    shown.push(line);
    used += line.length + 1;
  }
  const omitted = elementLines.length - shown.length;
  return omitted === 0 ? [...head, ...shown] : [...head, ...shown, `(${omitted} more elements not shown)`];
}

function renderStep(step: NewStep): string {
  const parts: string[] = [step.type];
  if (step.action !== null) parts.push(step.action);
  if (step.note !== null) parts.push(`(${step.note})`);
  // A note may hold line breaks (a human's answer); a step stays one line.
  return parts.join(': ').replace(/\s*\n\s*/g, ' ');
}

function join(lines: readonly string[]): string {
  return lines.join('\n');
}

function clamp(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, Math.max(0, limit - 1))}…`;
}
