/**
 * Splits an offline-planner prompt into sentences of tokens. Sentences are separated by `;`,
 * line breaks, or the word `then` (any case) standing on its own outside quotes, so a quoted
 * string may contain all three. Quotes are `"..."` (with `\"` and `\\` escapes) or the
 * typographic pair `“...”` that editors substitute for them.
 */

export type Token =
  | { kind: 'word'; text: string; start: number; end: number }
  | { kind: 'quoted'; text: string; start: number; end: number };

/** Tokens of one sentence plus where it sits in the prompt (for the recorded note). */
export interface Sentence {
  tokens: Token[];
  source: string;
}

export type LexResult = { ok: true; sentences: Sentence[] } | { ok: false; problem: string };

const CLOSING_QUOTE: Record<string, string> = { '"': '"', '“': '”' };

function isSeparatorChar(char: string): boolean {
  return char === ';' || char === '\n' || char === '\r';
}

function isWordChar(char: string): boolean {
  return !/\s/.test(char) && !isSeparatorChar(char) && !(char in CLOSING_QUOTE);
}

export function lexInstructions(prompt: string): LexResult {
  const sentences: Sentence[] = [];
  let current: Token[] = [];
  const endSentence = (): void => {
    const tokens = withoutFinalPeriod(current);
    current = [];
    const first = tokens[0];
    const last = tokens[tokens.length - 1];
    if (first === undefined || last === undefined) return;
    sentences.push({ tokens, source: prompt.slice(first.start, last.end) });
  };

  let index = 0;
  while (index < prompt.length) {
    const char = prompt[index] as string;
    if (isSeparatorChar(char)) {
      endSentence();
      index += 1;
    } else if (/\s/.test(char)) {
      index += 1;
    } else if (char in CLOSING_QUOTE) {
      const quoted = readQuoted(prompt, index);
      if (quoted === null) return { ok: false, problem: `unterminated quote at character ${index}` };
      current.push(quoted);
      index = quoted.end;
    } else {
      let end = index;
      while (end < prompt.length && isWordChar(prompt[end] as string)) end += 1;
      const text = prompt.slice(index, end);
      if (text.toLowerCase() === 'then') endSentence();
      else current.push({ kind: 'word', text, start: index, end });
      index = end;
    }
  }
  endSentence();
  return { ok: true, sentences };
}

function readQuoted(prompt: string, start: number): Token | null {
  const opening = prompt[start] as string;
  const closing = CLOSING_QUOTE[opening];
  let text = '';
  let index = start + 1;
  while (index < prompt.length) {
    const char = prompt[index] as string;
    if (char === closing) return { kind: 'quoted', text, start, end: index + 1 };
    const next = prompt[index + 1];
    if (opening === '"' && char === '\\' && (next === '"' || next === '\\')) {
      text += next;
      index += 2;
    } else {
      text += char;
      index += 1;
    }
  }
  return null;
}

/** People end sentences with a period; `press Enter.` means `press Enter`. */
function withoutFinalPeriod(tokens: Token[]): Token[] {
  const last = tokens[tokens.length - 1];
  if (last?.kind !== 'word' || !last.text.endsWith('.')) return tokens;
  const trimmed = last.text.slice(0, -1);
  const rest = tokens.slice(0, -1);
  return trimmed === '' ? rest : [...rest, { ...last, text: trimmed, end: last.end - 1 }];
}
