import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors';
import { parseByteRange } from './byte-range';

describe('parseByteRange', () => {
  it('reads one range, an open end and a suffix, clamped to the content', () => {
    expect(parseByteRange(undefined, 100)).toBeNull();
    expect(parseByteRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseByteRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseByteRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(parseByteRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseByteRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
  });

  it('answers the whole content to what it does not serve: other units, several ranges, reversed ones', () => {
    for (const header of ['items=0-1', 'bytes=0-1,5-6', 'bytes=9-2', 'bytes=-', 'nonsense']) expect(parseByteRange(header, 100)).toBeNull();
  });

  it('refuses a range past the end with 416 and the size in Content-Range', () => {
    for (const [header, size] of [['bytes=100-', 100], ['bytes=-0', 100], ['bytes=0-', 0]] as const) {
      let thrown: unknown;
      try {
        parseByteRange(header, size);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).apiCode).toBe('range_not_satisfiable');
      expect((thrown as ApiError).status).toBe(416);
      expect((thrown as ApiError).headers).toEqual({ 'Content-Range': `bytes */${size}` });
    }
  });
});
