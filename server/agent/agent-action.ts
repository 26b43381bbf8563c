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
  | { kind: 'ask_human'; question: string; help: HelpKind };

/**
 * What kind of help the agent asks for; it becomes the escalation's `kind`. A takeover
 * (the escalation kind `takeover`) is a human's decision, never the agent's.
 */
export type HelpKind = 'question' | 'captcha' | 'login' | 'blocked';
export const helpKinds = ['question', 'captcha', 'login', 'blocked'] as const satisfies readonly HelpKind[];

/** What an `extract` reads from the page; its value becomes the task result. */
export type ExtractSource = { of: 'title' } | { of: 'url' } | { of: 'text'; selector: string };
