import { describe, expect, it } from 'vitest';
import { bestTextMatch, clamp, normalize } from './text-match.js';

describe('normalize', () => {
  it('collapses every run of whitespace to one space and trims', () => {
    expect(normalize('  Save \n\t draft\u00a0 now ')).toBe('Save draft now');
  });

  it('reads null and undefined as empty text', () => {
    expect(normalize(null)).toBe('');
    expect(normalize(undefined)).toBe('');
  });
});

describe('clamp', () => {
  it('keeps normalized text within the limit as it is', () => {
    expect(clamp(' Pay \n now ', 7)).toBe('Pay now');
  });

  it('cuts longer text to the limit, ending in an ellipsis', () => {
    expect(clamp('Subscribe to the newsletter', 10)).toBe('Subscribe…');
  });
});

describe('bestTextMatch', () => {
  const candidate = (element: string, ...texts: (string | null)[]) => ({ element, texts });

  it('ranks exact text over case-insensitive equality over containment, whatever the order', () => {
    const candidates = [candidate('contains', 'Save draft'), candidate('caseless', 'SAVE'), candidate('exact', 'Save')];
    expect(bestTextMatch(candidates, 'Save', false)).toEqual({ element: 'exact', rank: 0 });
    expect(bestTextMatch(candidates.slice(0, 2), 'Save', false)).toEqual({ element: 'caseless', rank: 1 });
    expect(bestTextMatch(candidates.slice(0, 1), 'Save', false)).toEqual({ element: 'contains', rank: 2 });
  });

  it('prefers the shortest text among partial matches', () => {
    const candidates = [candidate('paragraph', 'Remember to save your work often'), candidate('button', 'Save draft')];
    expect(bestTextMatch(candidates, 'save', false)).toEqual({ element: 'button', rank: 2 });
  });

  it('compares each of a candidate’s texts, normalized, skipping empty ones', () => {
    const candidates = [candidate('link', null, '', '  Pay \n now ')];
    expect(bestTextMatch(candidates, 'Pay now', false)).toEqual({ element: 'link', rank: 0 });
  });

  it('gives ties to the first candidate, or to the last with preferDeepest', () => {
    const candidates = [candidate('outer', 'Pay'), candidate('inner', 'Pay')];
    expect(bestTextMatch(candidates, 'Pay', false)?.element).toBe('outer');
    expect(bestTextMatch(candidates, 'Pay', true)?.element).toBe('inner');
  });

  it('finds nothing when no text contains the wanted one', () => {
    expect(bestTextMatch([candidate('button', 'Cancel')], 'Save', false)).toBeNull();
  });
});
