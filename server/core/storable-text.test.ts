import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findUnstorableText, isStorableText, toStorableJson, toStorableText, unstorableInput } from './storable-text';

const LONE_HIGH = '\uD83D';
const LONE_LOW = '\uDE00';
const PAIR = '\uD83D\uDE00';

describe('storable text', () => {
  it('refuses NUL and unpaired surrogates, accepts paired ones and everything else', () => {
    expect(isStorableText(`plain ${PAIR} é 中`)).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText(`a${LONE_HIGH}`)).toBe(false);
    expect(isStorableText(`${LONE_LOW}a`)).toBe(false);
    expect(isStorableText(`${LONE_LOW}${LONE_HIGH}`)).toBe(false);
    // Called twice on purpose: a global pattern's lastIndex must not leak between calls.
    expect(isStorableText('a\u0000')).toBe(false);
  });

  it('replaces each NUL and unpaired surrogate with U+FFFD and keeps pairs', () => {
    expect(toStorableText(`a\u0000b${LONE_HIGH}c${PAIR}${LONE_LOW}`)).toBe(`a\uFFFDb\uFFFDc${PAIR}\uFFFD`);
  });

  it('makes any string storable, and changes nothing that already was', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('a', '\u0000', LONE_HIGH, LONE_LOW) }), (wellFormed, broken) => {
        expect(isStorableText(toStorableText(broken))).toBe(true);
        expect(toStorableText(broken)).toHaveLength(broken.length);
        if (isStorableText(wellFormed)) expect(toStorableText(wellFormed)).toBe(wellFormed);
      }),
    );
  });

  it('cleans every string of a JSON value, object keys included', () => {
    expect(toStorableJson({ 'k\u0000': ['x\u0000', 1, null, { t: LONE_LOW }], ok: true })).toEqual({ 'k\uFFFD': ['x\uFFFD', 1, null, { t: '\uFFFD' }], ok: true });
  });

  it('finds the first bad string or key in document order, with its path', () => {
    expect(findUnstorableText({ name: 'ok', allowed_domains: ['a.com', 'b\u0000.com'], prompt: 'x\u0000' })).toEqual(['allowed_domains', 1]);
    expect(findUnstorableText({ a: { 'b\u0000': 1 }, c: '\u0000' })).toEqual(['a', 'b\u0000']);
    expect(findUnstorableText({ a: 1, b: [true, null, 'fine'] })).toBeNull();
  });

  it('names the field as validation errors do, never echoing the refused character', () => {
    expect(unstorableInput({ allowed_domains: ['a.com', 'b\u0000'] })).toEqual({
      param: 'allowed_domains.1',
      message: 'Invalid value for allowed_domains.1: text must not contain NUL characters or unpaired UTF-16 surrogates.',
    });
    expect(unstorableInput({ a: [{ 'b\u0000': 1 }] })?.param).toBe('a.0.b\uFFFD');
    expect(unstorableInput({ a: 'fine' })).toBeNull();
  });

  it('walks a deeply nested body without overflowing the stack', () => {
    const depth = 200_000;
    const nested = JSON.parse(`${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}`);
    expect(findUnstorableText({ deep: nested })).toHaveLength(depth + 1);
  });
});
