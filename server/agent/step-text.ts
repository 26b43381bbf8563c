import type { ActionTarget, PageObservation } from '../browser/types';
import type { AgentAction, ExtractSource, PageValueSource } from './agent-action';
import type { JsonValue } from './json-value';

/**
 * The text the agent puts into recorded steps. An `action` step's `action` is a short machine
 * string, one per kind:
 *   navigate <url>
 *   click "<text or selector>"            click ref=<n> (<role> "<name>")
 *   type "<text>" into "<target>"         type "<text>" into ref=<n> (<role> "<name>")
 *   press <Key> | scroll down | scroll up | wait for "<text>"
 *   extract title | extract url | extract text of "<selector>" | extract texts of "<selector>"
 *   extract number in "<selector>" | extract json {"<key>": <source>, ...}
 *   ask_human "<question>" | ask_human choice "<question>" | ask_human confirm "<question>" | ...
 * A typed text naming a credentials field (`{{otp}}`) is recorded as written: the value is
 * swapped in only as it is typed.
 *   download "<text or selector>"         download ref=<n> (<role> "<name>")
 * Strings are JSON-quoted and clamped, so a step stays one readable line.
 */
export function describeAction(action: Exclude<AgentAction, { kind: 'finish' }>, page: PageObservation): string {
  switch (action.kind) {
    case 'navigate':
      return `navigate ${clampText(action.url, URL_LIMIT)}`;
    case 'click':
      return `click ${describeTarget(action.target, page)}`;
    case 'type':
      return `type ${quote(action.text)} into ${describeTarget(action.into, page)}`;
    case 'press':
      return `press ${action.key}`;
    case 'scroll':
      return `scroll ${action.direction}`;
    case 'wait':
      return `wait for ${quote(action.text)}`;
    case 'extract':
      return `extract ${describeSource(action.source)}`;
    case 'ask_human':
      return action.help === 'question' ? `ask_human ${quote(action.question)}` : `ask_human ${action.help} ${quote(action.question)}`;
    case 'download':
      return `download ${describeTarget(action.target, page)}`;
  }
}

/** The `note` of the `answer` message step: the result itself when it is text, else its JSON. */
export function describeAnswer(answer: JsonValue): string {
  return clampText(typeof answer === 'string' ? answer : JSON.stringify(answer), NOTE_LIMIT);
}

/** Notes hold prose from a prompt, a page or a model; the task result keeps the full value. */
export function clampNote(text: string): string {
  return clampText(text, NOTE_LIMIT);
}

const QUOTED_LIMIT = 200;
const URL_LIMIT = 2000;
const NOTE_LIMIT = 2000;

function describeTarget(target: ActionTarget, page: PageObservation): string {
  if (typeof target === 'string') return quote(target);
  const element = page.elements.find((candidate) => candidate.ref === target.ref);
  return element === undefined ? `ref=${target.ref}` : `ref=${target.ref} (${element.role} ${quote(element.name)})`;
}

function describeSource(source: ExtractSource): string {
  if (source.of === 'json') return `json {${source.fields.map((field) => `${quote(field.key)}: ${describeValue(field.source)}`).join(', ')}}`;
  return describeValue(source);
}

function describeValue(source: PageValueSource): string {
  switch (source.of) {
    case 'text':
      return `text of ${quote(source.selector)}`;
    case 'texts':
      return `texts of ${quote(source.selector)}`;
    case 'number':
      return `number in ${quote(source.selector)}`;
    default:
      return source.of;
  }
}

function quote(text: string): string {
  return JSON.stringify(clampText(text, QUOTED_LIMIT));
}

function clampText(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}
