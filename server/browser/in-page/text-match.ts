// How the page code compares texts. Pure: it runs in the page and in unit tests alike.

/** Whitespace runs collapsed to one space, trimmed; null and undefined read as ''. */
export function normalize(text: string | null | undefined): string {
  return (text || '').replace(/\s+/g, ' ').trim();
}

/** Normalized text cut to `limit` characters, the last one an ellipsis when cut. */
export function clamp(text: string | null | undefined, limit: number): string {
  const clean = normalize(text);
  return clean.length > limit ? clean.slice(0, limit - 1) + '…' : clean;
}

/** Something that may be found by text, with every text it can be known by. */
export interface TextCandidate<E> {
  element: E;
  texts: ReadonlyArray<string | null | undefined>;
}

/**
 * Best match of `wanted` (already normalized) among candidates, or null: rank 0 for an
 * exact match, 1 for case-insensitive equality, 2 for case-insensitive contains (shortest
 * text wins, so "Save" prefers "Save draft" over a whole paragraph). With preferDeepest,
 * ties go to the later candidate, which in document order is the innermost of nested
 * elements carrying the same text.
 */
export function bestTextMatch<E>(
  candidates: Iterable<TextCandidate<E>>,
  wanted: string,
  preferDeepest: boolean,
): { element: E; rank: number } | null {
  const lower = wanted.toLowerCase();
  let best: { element: E; rank: number; length: number } | null = null;
  for (const { element, texts } of candidates) {
    for (const raw of texts) {
      const text = normalize(raw);
      if (!text) continue;
      let rank: number;
      if (text === wanted) rank = 0;
      else if (text.toLowerCase() === lower) rank = 1;
      else if (text.toLowerCase().includes(lower)) rank = 2;
      else continue;
      const better =
        !best ||
        rank < best.rank ||
        (rank === best.rank && (text.length < best.length || (preferDeepest && text.length === best.length)));
      if (better) {
        best = { element, rank, length: text.length };
      }
    }
  }
  return best ? { element: best.element, rank: best.rank } : null;
}
