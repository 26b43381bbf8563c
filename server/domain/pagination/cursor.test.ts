import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/errors';
import { CursorCodec } from './cursor';

const codec = new CursorCodec(randomBytes(32));
const position = { createdAt: new Date('2026-11-22T10:00:00.123Z'), id: randomUUID() };

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof ApiError ? error.apiCode : 'other';
  }
  return undefined;
}

describe('CursorCodec', () => {
  it('round-trips a position for the same list', () => {
    expect(codec.decode('devices:org', codec.encode('devices:org', position))).toEqual(position);
  });

  it('refuses a cursor of another list, a tampered one, garbage, and one signed with another secret', () => {
    const cursor = codec.encode('devices:org', position);
    const [payload, signature] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ l: 'devices:org', t: 0, i: position.id })).toString('base64url');
    expect(codeOf(() => codec.decode('tasks:org', cursor))).toBe('invalid_cursor');
    expect(codeOf(() => codec.decode('devices:org', `${forged}.${signature}`))).toBe('invalid_cursor');
    expect(codeOf(() => codec.decode('devices:org', `${payload}.${signature!.slice(1)}x`))).toBe('invalid_cursor');
    expect(codeOf(() => codec.decode('devices:org', 'garbage'))).toBe('invalid_cursor');
    expect(codeOf(() => codec.decode('devices:org', ''))).toBe('invalid_cursor');
    expect(codeOf(() => new CursorCodec(randomBytes(32)).decode('devices:org', cursor))).toBe('invalid_cursor');
  });

  it('builds pages from limit + 1 rows with "" on the last page', () => {
    const rows = Array.from({ length: 3 }, (_, index) => ({ createdAt: new Date(1000 - index), id: randomUUID() }));
    const full = codec.page('l', rows, 2, (row) => row.id);
    expect(full.data).toEqual([rows[0]!.id, rows[1]!.id]);
    expect(codec.decode('l', full.next_cursor)).toEqual(rows[1]);
    expect(codec.page('l', rows.slice(0, 2), 2, (row) => row.id).next_cursor).toBe('');
  });
});
