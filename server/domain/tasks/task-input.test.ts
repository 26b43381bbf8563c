import { describe, expect, it } from 'vitest';
import { normalizedDomains, PROMPT_MAX_CHARS, SubmitTaskBodySchema } from './task-input';

describe('SubmitTaskBodySchema', () => {
  it('accepts a prompt up to 20,000 characters and refuses a longer or blank one', () => {
    expect(SubmitTaskBodySchema.safeParse({ prompt: 'x'.repeat(PROMPT_MAX_CHARS) }).success).toBe(true);
    for (const prompt of ['x'.repeat(PROMPT_MAX_CHARS + 1), '', '   \n ']) {
      const parsed = SubmitTaskBodySchema.safeParse({ prompt });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.path).toEqual(['prompt']);
    }
  });

  it('takes max_steps as an int32 of at least 1, or null', () => {
    for (const max_steps of [1, 2 ** 31 - 1, null, undefined]) expect(SubmitTaskBodySchema.safeParse({ prompt: 'p', max_steps }).success).toBe(true);
    for (const max_steps of [0, -1, 1.5, 2 ** 31, '3']) expect(SubmitTaskBodySchema.safeParse({ prompt: 'p', max_steps }).success).toBe(false);
  });

  it('takes allowed_domains as hostnames, refusing entries with no usable host', () => {
    expect(SubmitTaskBodySchema.safeParse({ prompt: 'p', allowed_domains: ['example.com', 'localhost', '127.0.0.1'] }).success).toBe(true);
    const bad = SubmitTaskBodySchema.safeParse({ prompt: 'p', allowed_domains: ['example.com', 'http://', '*'] });
    expect(bad.error?.issues.map((issue) => issue.path)).toEqual([
      ['allowed_domains', 1],
      ['allowed_domains', 2],
    ]);
  });
});

describe('normalizedDomains', () => {
  it('stores bare lowercase hosts once, and null for unrestricted', () => {
    expect(normalizedDomains(['https://Example.com/path', '*.example.com', 'localhost:3000'])).toEqual(['example.com', 'localhost']);
    expect(normalizedDomains([])).toBeNull();
    expect(normalizedDomains(null)).toBeNull();
    expect(normalizedDomains(undefined)).toBeNull();
  });
});
