import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, lt } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { idempotencyKeys } from '../../../db/schema';
import { ApiError } from '../../core/errors';

const RETENTION_MS = 24 * 60 * 60 * 1000;
// A request still "in progress" after this long died with its server; its key is freed.
const ABANDONED_AFTER_MS = 2 * 60 * 1000;
const WAIT_STEP_MS = 50;
const MAX_WAIT_MS = 60_000;

export interface IdempotentCall {
  orgId: string;
  /** Route name; keys are scoped per organization and route. */
  route: string;
  /** The Idempotency-Key header, if the client sent one. */
  key: string | undefined;
  /** The validated request (path id and body), compared to detect a reused key. */
  request: unknown;
}

/**
 * Runs `create` at most once per (organization, route, key). The first request inserts
 * an `in_progress` row before doing the work; concurrent requests with the same key wait
 * for it and replay its response; a different request body is 409 idempotency_conflict.
 * Only successes are kept: a failed attempt frees the key so the client can retry.
 */
export async function withIdempotency<T>(db: Db, call: IdempotentCall, create: () => Promise<T>): Promise<T> {
  if (call.key === undefined) return create();
  if (call.key.length === 0 || call.key.length > 255) {
    throw new ApiError('invalid_request', { param: 'Idempotency-Key', message: 'The Idempotency-Key header must be 1 to 255 characters.' });
  }
  const requestHash = hashRequest(call.request);
  const identity = and(eq(idempotencyKeys.orgId, call.orgId), eq(idempotencyKeys.route, call.route), eq(idempotencyKeys.key, call.key));
  const startedWaiting = Date.now();

  for (;;) {
    const now = new Date();
    const claimed = await db
      .insert(idempotencyKeys)
      .values({ orgId: call.orgId, route: call.route, key: call.key, requestHash, state: 'in_progress', expiresAt: new Date(now.getTime() + RETENTION_MS) })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (claimed.length > 0) return runAndRemember(db, identity, create);

    const [existing] = await db.select().from(idempotencyKeys).where(identity);
    if (existing === undefined) continue;
    const abandoned = existing.state === 'in_progress' && now.getTime() - existing.createdAt.getTime() > ABANDONED_AFTER_MS;
    if (existing.expiresAt <= now || abandoned) {
      await db.delete(idempotencyKeys).where(and(identity, eq(idempotencyKeys.createdAt, existing.createdAt)));
      continue;
    }
    if (existing.requestHash !== requestHash) throw new ApiError('idempotency_conflict');
    if (existing.state === 'completed') return existing.responseBody as T;
    if (Date.now() - startedWaiting > MAX_WAIT_MS) {
      throw new ApiError('idempotency_conflict', { message: 'A request with this Idempotency-Key is still in progress.' });
    }
    await sleep(WAIT_STEP_MS);
  }
}

async function runAndRemember<T>(db: Db, identity: ReturnType<typeof and>, create: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await create();
  } catch (error) {
    await db.delete(idempotencyKeys).where(identity);
    throw error;
  }
  await db.update(idempotencyKeys).set({ state: 'completed', responseBody: result }).where(identity);
  return result;
}

/** Removes records past their 24 h retention; run by the periodic sweep. */
export async function deleteExpiredIdempotencyKeys(db: Db, now = new Date()): Promise<void> {
  await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now));
}

function hashRequest(request: unknown): string {
  return createHash('sha256').update(stableStringify(request)).digest('hex');
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` count as the same body. */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableStringify(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
