import { ApiError } from '../core/errors';
import type { ByteRange } from '../storage';

/**
 * The one range a `Range: bytes=...` header asks of `size` bytes (RFC 9110 §14.1.2):
 * null for the whole content (no header, another unit, or several ranges, which are
 * answered whole as the RFC allows); 416 range_not_satisfiable when it lies past the end.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | null {
  if (header === undefined) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  let start: number;
  let end: number;
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (length === 0) throw unsatisfiable(size);
    start = Math.max(0, size - length);
    end = size - 1;
  } else {
    start = Number(first);
    end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
    if (last !== '' && Number(last) < start) return null;
  }
  if (start >= size || size === 0) throw unsatisfiable(size);
  return { start, end };
}

function unsatisfiable(size: number): ApiError {
  return new ApiError('range_not_satisfiable', { headers: { 'Content-Range': `bytes */${size}` } });
}
