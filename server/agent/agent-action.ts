import type { ActionTarget } from '../browser/types';
import type { JsonValue } from './json-value';

/** One thing a planner can decide to do next. */
export type AgentAction =
  | { kind: 'navigate'; url: string }
  | { kind: 'click'; target: ActionTarget }
  | { kind: 'type'; text: string; into: ActionTarget }
  | { kind: 'press'; key: string }
  | { kind: 'scroll'; direction: 'up' | 'down' }
  | { kind: 'wait'; text: string }
  | { kind: 'extract'; source: ExtractSource }
  /** Click the target and keep the file its download brings (GET /v1/tasks/{id}/files). */
  | { kind: 'download'; target: ActionTarget }
  | { kind: 'finish'; answer: JsonValue }
  | ({ kind: 'ask_human'; question: string } & HelpRequest);

/**
 * What kind of help the agent asks for; it becomes the escalation's `kind`, with what the
 * human picks from (`choice`) or fills (`credentials`). captcha, login and blocked are the
 * older free-text kinds.
 */
export type HelpRequest =
  | { help: 'question' | 'confirm' | 'takeover' | 'captcha' | 'login' | 'blocked' }
  | { help: 'choice'; options: string[]; multiple: boolean }
  | { help: 'credentials'; fields: string[] };
export type HelpKind = HelpRequest['help'];
export const freeTextHelpKinds = ['question', 'captcha', 'login', 'blocked'] as const satisfies readonly HelpKind[];

/** One value read from the page. */
export type PageValueSource =
  | { of: 'title' }
  | { of: 'url' }
  | { of: 'text'; selector: string }
  | { of: 'texts'; selector: string }
  | { of: 'number'; selector: string };

/** What an `extract` reads from the page; its value becomes the task result. */
export type ExtractSource = PageValueSource | { of: 'json'; fields: Array<{ key: string; source: PageValueSource }> };
