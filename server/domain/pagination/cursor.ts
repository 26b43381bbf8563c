import { createHmac, timingSafeEqual } from 'node:crypto';
import { and, lt, or, eq, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { ApiError } from '../../core/errors';

/** Keyset position: lists are ordered by (created_at, id), newest first. */
export interface PagePosition {
  createdAt: Date;
  id: string;
}

export interface Page<T> {
  data: T[];
  next_cursor: string;
}

export const PageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(512).optional(),
});
export type PageQuery = z.infer<typeof PageQuerySchema>;

const PayloadSchema = z.object({ l: z.string(), t: z.number().int(), i: z.string() });

/**
 * Opaque, tamper-evident cursors: the position plus the identity of the list it belongs
 * to (route, organization and filters), HMAC-signed with a per-database secret. A cursor
 * that was altered, made up, or issued for another list is refused with invalid_cursor.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(list: string, position: PagePosition): string {
    const payload = Buffer.from(JSON.stringify({ l: list, t: position.createdAt.getTime(), i: position.id })).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decode(list: string, cursor: string): PagePosition {
    const [payload, signature, ...rest] = cursor.split('.');
    if (payload === undefined || signature === undefined || rest.length > 0) throw invalidCursor();
    const expected = Buffer.from(this.sign(payload), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    const parsed = PayloadSchema.safeParse(decoded);
    if (!parsed.success || parsed.data.l !== list) throw invalidCursor();
    return { createdAt: new Date(parsed.data.t), id: parsed.data.i };
  }

  /**
   * Builds a page from rows fetched with `limit + 1`: the extra row only tells whether
   * another page exists.
   */
  page<Row extends PagePosition, Item>(list: string, rows: Row[], limit: number, toItem: (row: Row) => Item): Page<Item> {
    const visible = rows.slice(0, limit);
    const last = visible.at(-1);
    return {
      data: visible.map(toItem),
      next_cursor: rows.length > limit && last !== undefined ? this.encode(list, last) : '',
    };
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest().subarray(0, 16).toString('base64url');
  }
}

/** The keyset condition "older than the cursor position" for a newest-first list. */
export function olderThan(createdAt: PgColumn, id: PgColumn, position: PagePosition | null): SQL | undefined {
  if (position === null) return undefined;
  return or(lt(createdAt, position.createdAt), and(eq(createdAt, position.createdAt), lt(id, position.id)));
}

function invalidCursor(): ApiError {
  return new ApiError('invalid_cursor', { param: 'cursor' });
}
