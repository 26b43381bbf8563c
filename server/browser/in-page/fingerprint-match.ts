// How a target recorded by the replay cache is recognised on a later page. Pure: it runs in
// the page (locateFingerprint) and in unit tests alike.

/**
 * What identifies an element beyond a CSS path: how it presents itself (role, accessible
 * name, label, text), the attributes pages keep stable across releases, and where it sits
 * in the document's structure.
 */
export interface TargetFingerprint {
  tag: string;
  role: string;
  /** Accessible name (aria-label, labelledby, label, text, placeholder, title, name). */
  name: string;
  /** Text of the element's <label>s. */
  label: string;
  /** Its own rendered text, clamped. */
  text: string;
  /** The stable attributes it carries (STABLE_ATTRIBUTES), by name. */
  attributes: Record<string, string>;
  /** `tag:nth-of-type(n)` from the root of its document (or shadow root) down, joined by `>`. */
  path: string;
}

/** Attributes that name an element rather than its state, with how much an equal one counts. */
export const STABLE_ATTRIBUTES: Readonly<Record<string, number>> = {
  id: 3,
  'data-testid': 3,
  'data-test': 3,
  'data-qa': 3,
  name: 2,
  'aria-label': 2,
  type: 1,
  placeholder: 1,
  title: 1,
  href: 1,
  for: 1,
};

/** Texts of a fingerprint are clamped to this many characters. */
export const FINGERPRINT_TEXT_LIMIT = 200;

/** Share of what a fingerprint could score that a candidate must reach. */
const MATCH_SHARE = 0.5;

/** Attributes whose equality alone identifies the element (when its name changed). */
const IDENTIFYING_ATTRIBUTES = ['id', 'data-testid', 'data-test', 'data-qa', 'name'];

/**
 * How well `seen`, an element of the live page, matches the recorded `stored`; null when it
 * is not the same element. Tag and role must agree; then the element must still be who it
 * was (the same accessible name, or an identifying attribute such as id or data-testid), and
 * score at least half of what its recorded signals could: a button moved elsewhere on the
 * page keeps its name and matches, a button renamed and moved matches nothing.
 */
export function matchScore(stored: TargetFingerprint, seen: TargetFingerprint): number | null {
  if (stored.tag !== seen.tag || stored.role !== seen.role) return null;
  let score = 0;
  let possible = 0;
  const weigh = (recorded: string, now: string, weight: number) => {
    if (recorded === '') return;
    possible += weight;
    if (recorded === now) score += weight;
  };
  weigh(stored.name, seen.name, 4);
  weigh(stored.label, seen.label, 2);
  weigh(stored.text, seen.text, 2);
  for (const [attribute, value] of Object.entries(stored.attributes)) weigh(value, seen.attributes[attribute] ?? '', STABLE_ATTRIBUTES[attribute] ?? 1);
  weigh(stored.path, seen.path, 2);
  const sameName = stored.name !== '' && stored.name === seen.name;
  const sameIdentity = IDENTIFYING_ATTRIBUTES.some((attribute) => {
    const value = stored.attributes[attribute];
    return value !== undefined && value !== '' && seen.attributes[attribute] === value;
  });
  if (!sameName && !sameIdentity) return null;
  return possible > 0 && score >= possible * MATCH_SHARE ? score : null;
}

/** What a search of the live page for a fingerprint found. */
export type LocateResult = { status: 'found' } | { status: 'missing' } | { status: 'ambiguous' };

/**
 * The one candidate that matches best, or why there is none: no candidate matches
 * (`missing`), or two match equally well (`ambiguous`: acting on either could be wrong).
 */
export function bestMatch<E>(stored: TargetFingerprint, candidates: ReadonlyArray<{ element: E; fingerprint: TargetFingerprint }>): { element: E } | { status: 'missing' | 'ambiguous' } {
  let best: { element: E; score: number } | null = null;
  let tied = false;
  for (const candidate of candidates) {
    const score = matchScore(stored, candidate.fingerprint);
    if (score === null) continue;
    if (best === null || score > best.score) {
      best = { element: candidate.element, score };
      tied = false;
    } else if (score === best.score) {
      tied = true;
    }
  }
  if (best === null) return { status: 'missing' };
  return tied ? { status: 'ambiguous' } : { element: best.element };
}
