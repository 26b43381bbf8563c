import type { PageValueSource } from './agent-action';

/**
 * The object of `return json {"<key>": <extraction>, ...}`, read from the sentence as
 * written: keys are JSON strings, each extraction one of `the title`, `the url`,
 * `the text of "<selector>"`, `the texts of "<selector>"`, `the number in "<selector>"`.
 * Null when the sentence is not exactly that (no keys, a repeated key, anything else).
 */
export function parseJsonReturn(sentence: string): Array<{ key: string; source: PageValueSource }> | null {
  const head = /^return\s+json\s*/i.exec(sentence);
  if (head === null) return null;
  let rest = sentence.slice(head[0].length);
  const eat = (pattern: RegExp): RegExpExecArray | null => {
    const match = pattern.exec(rest);
    if (match !== null) rest = rest.slice(match[0].length);
    return match;
  };
  if (eat(/^\{\s*/) === null) return null;
  const fields: Array<{ key: string; source: PageValueSource }> = [];
  for (;;) {
    const key = eat(STRING);
    if (key === null || eat(/^\s*:\s*/) === null) return null;
    const source = readSource(eat);
    if (source === null) return null;
    const name = jsonString(key[0]);
    if (name === null) return null;
    if (fields.some((field) => field.key === name)) return null;
    fields.push({ key: name, source });
    if (eat(/^\s*,\s*/) !== null) continue;
    if (eat(/^\s*\}\s*$/) !== null) return fields.length > MAX_FIELDS ? null : fields;
    return null;
  }
}

const MAX_FIELDS = 50;
/** A JSON string literal (the same quotes and escapes the lexer reads). */
const STRING = /^"(?:[^"\\]|\\.)*"/;

function readSource(eat: (pattern: RegExp) => RegExpExecArray | null): PageValueSource | null {
  if (eat(/^the\s+title\b/i) !== null) return { of: 'title' };
  if (eat(/^the\s+url\b/i) !== null) return { of: 'url' };
  const kind = eat(/^the\s+(texts\s+of|text\s+of|number\s+in)\s+/i);
  if (kind === null) return null;
  const quoted = eat(STRING);
  if (quoted === null) return null;
  const selector = jsonString(quoted[0]);
  if (selector === null || selector === '') return null;
  const word = kind[1]!.toLowerCase();
  return { of: word.startsWith('texts') ? 'texts' : word.startsWith('text') ? 'text' : 'number', selector };
}

function jsonString(literal: string): string | null {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return null;
  }
}
