import type { PageValueSource } from './agent-action';
import type { JsonValue } from './json-value';

/** What an extraction may read from the page. */
export interface PageValueReader {
  page(): Promise<{ title: string; url: string }>;
  textOf(selector: string): Promise<string>;
  textsOf(selector: string): Promise<string[]>;
}

/** One extraction's value: text, a list of texts, or the number in a text (null when it has none). */
export async function readPageValue(reader: PageValueReader, source: PageValueSource): Promise<JsonValue> {
  switch (source.of) {
    case 'title':
      return (await reader.page()).title;
    case 'url':
      return (await reader.page()).url;
    case 'text':
      return reader.textOf(source.selector);
    case 'texts':
      return reader.textsOf(source.selector);
    case 'number':
      return numberIn(await reader.textOf(source.selector));
  }
}

/**
 * The first number written in `text`: an optional minus, digits with optional thousands
 * commas, an optional decimal part ("Total: $1,234.50" → 1234.5). Null when there is none.
 */
export function numberIn(text: string): number | null {
  const match = /-?\d[\d,]*(?:\.\d+)?/.exec(text.replace(/\u2212/g, '-'));
  if (match === null) return null;
  const value = Number(match[0].replace(/,/g, ''));
  return Number.isFinite(value) ? value : null;
}
