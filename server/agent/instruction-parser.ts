import type { AgentAction, PageValueSource } from './agent-action';
import { lexInstructions, type Token } from './instruction-lexer';
import { parseJsonReturn } from './json-return';
import { normalizeUrl } from './normalize-url';

/**
 * The offline planner's instruction language (CONTRACT.md, "Offline planner instructions"),
 * keywords in any case:
 *   go to <url> | open <url>                   (no scheme: https:// is added; see normalize-url.ts)
 *   click "<visible text or CSS selector>"
 *   download "<visible text or CSS selector>"  (click, and keep the file it downloads)
 *   type "<text>" into "<label, placeholder, name or CSS selector>"
 *   press <Key>                                (Enter, Tab, Escape, Control+A, ...)
 *   wait for "<text>"
 *   scroll down | scroll up
 *   return the title | return the url | return the text of "<CSS selector>"
 *   return the texts of "<CSS selector>" | return the number in "<CSS selector>"
 *   return json {"<key>": <extraction>, ...}   (an extraction is any of the five above without `return`)
 *   ask a human "<question>"
 *   ask a human to choose between "<A>" and "<B>"   (or "<A>", "<B>" or "<C>" ...)
 *   ask a human to confirm "<what>"
 *   ask a human for "<field>"                  (or "<field>" and "<field>"; credentials, typed as {{field}})
 *   ask a human to take over "<what>"
 * The whole prompt is parsed before anything runs, so one bad sentence fails the task before
 * its first action.
 */

export interface Instruction {
  action: Exclude<AgentAction, { kind: 'finish' }>;
  /** The sentence as written in the prompt. */
  source: string;
}

export type ParsedPrompt = { ok: true; instructions: Instruction[] } | { ok: false; problem: string };

export function parseInstructions(prompt: string): ParsedPrompt {
  const lexed = lexInstructions(prompt);
  if (!lexed.ok) return lexed;
  if (lexed.sentences.length === 0) return { ok: false, problem: 'the prompt has no instructions' };
  const instructions: Instruction[] = [];
  for (const [position, sentence] of lexed.sentences.entries()) {
    const action = parseSentence(sentence.tokens, sentence.source);
    if (action === null) {
      return { ok: false, problem: `sentence ${position + 1} is not an instruction` };
    }
    instructions.push({ action, source: sentence.source });
  }
  return { ok: true, instructions };
}

/** Keywords are matched lowercased; a quoted token shows as the marker `"`. */
const QUOTED = '"';

function parseSentence(tokens: Token[], source: string): Instruction['action'] | null {
  const shape = tokens.map((token) => (token.kind === 'quoted' ? QUOTED : token.text.toLowerCase())).join(' ');
  const text = (index: number): string => tokens[index]?.text ?? '';
  const quoted = (index: number): string | null => {
    const value = text(index);
    return value === '' ? null : value;
  };

  switch (shape) {
    case 'scroll down':
      return { kind: 'scroll', direction: 'down' };
    case 'scroll up':
      return { kind: 'scroll', direction: 'up' };
    case 'return the title':
      return { kind: 'extract', source: { of: 'title' } };
    case 'return the url':
      return { kind: 'extract', source: { of: 'url' } };
    case `return the text of ${QUOTED}`:
    case `return the texts of ${QUOTED}`:
    case `return the number in ${QUOTED}`: {
      const selector = quoted(4);
      const of = tokens[2]!.text.toLowerCase() === 'text' ? 'text' : tokens[2]!.text.toLowerCase() === 'texts' ? 'texts' : 'number';
      return selector === null ? null : { kind: 'extract', source: { of, selector } satisfies PageValueSource };
    }
    case `ask a human to confirm ${QUOTED}`:
    case `ask a human to take over ${QUOTED}`: {
      const question = quoted(tokens.length - 1);
      return question === null ? null : { kind: 'ask_human', question, help: shape.includes('confirm') ? 'confirm' : 'takeover' };
    }
    case `download ${QUOTED}`: {
      const target = quoted(1);
      return target === null ? null : { kind: 'download', target };
    }
    case `click ${QUOTED}`: {
      const target = quoted(1);
      return target === null ? null : { kind: 'click', target };
    }
    case `type ${QUOTED} into ${QUOTED}`: {
      const value = quoted(1);
      const into = quoted(3);
      return value === null || into === null ? null : { kind: 'type', text: value, into };
    }
    case `wait for ${QUOTED}`: {
      const value = quoted(2);
      return value === null ? null : { kind: 'wait', text: value };
    }
    case `ask a human ${QUOTED}`: {
      const question = quoted(3);
      return question === null ? null : { kind: 'ask_human', question, help: 'question' };
    }
  }

  if (shape.startsWith('return json ')) {
    const fields = parseJsonReturn(source);
    return fields === null ? null : { kind: 'extract', source: { of: 'json', fields } };
  }
  if (shape.startsWith(`ask a human to choose between ${QUOTED}`)) {
    const options = quotedList(tokens.slice(6), ['and', 'or']);
    return options === null || options.length < 2
      ? null
      : { kind: 'ask_human', question: `Choose one: ${options.map((option) => JSON.stringify(option)).join(', ')}`, help: 'choice', options, multiple: false };
  }
  if (shape.startsWith(`ask a human for ${QUOTED}`)) {
    const fields = quotedList(tokens.slice(4), ['and']);
    const valid = fields !== null && fields.every((field) => FIELD_NAME.test(field)) && new Set(fields).size === fields.length && fields.length <= MAX_FIELDS;
    return valid ? { kind: 'ask_human', question: `Provide ${fields.join(', ')}`, help: 'credentials', fields } : null;
  }

  const verb = shape.split(' ', 1)[0];
  if (verb === 'press' && tokens.length === 2 && tokens[1]?.kind === 'word') {
    const key = text(1);
    // Key names as puppeteer knows them (Enter, ArrowDown, F5, a) and chords like Control+A.
    return /^[A-Za-z0-9]+(\+[A-Za-z0-9]+)*$/.test(key) ? { kind: 'press', key } : null;
  }
  const urlIndex = verb === 'open' ? 1 : shape.startsWith('go to ') ? 2 : null;
  if (urlIndex !== null && tokens.length === urlIndex + 1) {
    const url = normalizeUrl(text(urlIndex));
    return url === null ? null : { kind: 'navigate', url };
  }
  return null;
}

/** Credentials field names: they become placeholders (`{{otp}}`) and JSON keys. */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
const MAX_FIELDS = 10;
const MAX_OPTIONS = 20;
const OPTION_MAX_CHARS = 200;

/** `"A", "B" and "C"`: quoted strings separated by commas, the last by one of `joiners`; null if it is not that. */
function quotedList(tokens: Token[], joiners: readonly string[]): string[] | null {
  const values: string[] = [];
  for (const [index, token] of tokens.entries()) {
    if (index % 2 === 0) {
      if (token.kind !== 'quoted' || token.text === '' || token.text.length > OPTION_MAX_CHARS) return null;
      values.push(token.text);
      continue;
    }
    const word = token.kind === 'word' ? token.text.toLowerCase() : null;
    const last = index === tokens.length - 2;
    if (word === null || !(last ? joiners.includes(word) : word === ',')) return null;
  }
  if (tokens.length % 2 === 0 || values.length > MAX_OPTIONS || new Set(values).size !== values.length) return null;
  return values;
}
