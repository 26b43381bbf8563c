// The replay cache's side of the page: what identifies an element the agent acted on, and
// finding that element again on a later visit (fingerprint-match.ts decides what matches).
import { labelText, nameOf, roleOf } from './accessibility.js';
import { REPLAY_ATTRIBUTE } from './contract.js';
import { deepQueryAll, isVisible, tagOf } from './dom-query.js';
import { bestMatch, FINGERPRINT_TEXT_LIMIT, STABLE_ATTRIBUTES, type LocateResult, type TargetFingerprint } from './fingerprint-match.js';
import { renderedText } from './rendered-text.js';
import { clamp } from './text-match.js';

/**
 * Ids that look generated (long digit runs, hashes) change between page loads and would
 * make a fingerprint miss its own element; they are left out.
 */
const GENERATED_ID = /\d{4,}|[0-9a-f]{8,}|^:r|^ember\d|^react-/i;

export function fingerprintOf(el: Element): TargetFingerprint {
  const attributes: Record<string, string> = {};
  for (const attribute of Object.keys(STABLE_ATTRIBUTES)) {
    const value = el.getAttribute(attribute);
    if (value === null || value.trim() === '') continue;
    if (attribute === 'id' && GENERATED_ID.test(value)) continue;
    attributes[attribute] = value.slice(0, FINGERPRINT_TEXT_LIMIT);
  }
  return {
    tag: tagOf(el),
    role: roleOf(el),
    name: clamp(nameOf(el), FINGERPRINT_TEXT_LIMIT),
    label: clamp(labelText(el), FINGERPRINT_TEXT_LIMIT),
    text: clamp(renderedText(el), FINGERPRINT_TEXT_LIMIT),
    attributes,
    path: structuralPath(el),
  };
}

/** `tag:nth-of-type(n)` steps from the element's root (document or shadow root) down to it. */
function structuralPath(el: Element): string {
  const steps: string[] = [];
  for (let node: Element | null = el; node !== null; node = node.parentElement) {
    const tag = tagOf(node);
    const sameTag = node.parentElement === null ? [node] : Array.from(node.parentElement.children).filter((sibling) => tagOf(sibling) === tag);
    steps.push(`${tag}:nth-of-type(${sameTag.indexOf(node) + 1})`);
  }
  return steps.reverse().join('>');
}

/**
 * Finds the visible element of this document that `fingerprint` describes and marks it with
 * REPLAY_ATTRIBUTE = `marker` (the mark of an earlier search is removed first).
 */
export function locateFingerprint({ fingerprint, marker }: { fingerprint: TargetFingerprint; marker: string }): LocateResult {
  for (const el of deepQueryAll(`[${REPLAY_ATTRIBUTE}]`)) el.removeAttribute(REPLAY_ATTRIBUTE);
  const candidates = deepQueryAll(fingerprint.tag)
    .filter((el) => roleOf(el) === fingerprint.role && isVisible(el))
    .map((el) => ({ element: el, fingerprint: fingerprintOf(el) }));
  const found = bestMatch(fingerprint, candidates);
  if (!('element' in found)) return found;
  found.element.setAttribute(REPLAY_ATTRIBUTE, marker);
  return { status: 'found' };
}
