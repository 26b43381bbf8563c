import { and, eq, gt, isNotNull, isNull, lte, ne, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, Tx } from '../../../db/client';
import { devices, sessions } from '../../../db/schema';
import type { Config } from '../../core/config';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { emitEvent } from '../events/emit-event';
import { toPublicId } from '../ids';
import { actorOf, systemActor, type Actor, type Principal } from '../keys/principal';
import { dbNow, dbNowPlus } from '../db-clock';
import type { TaskRow } from '../tasks/task-resource';
import { lockTask, parkTask, resumeParkedTask } from '../tasks/task-transitions';
import { iso } from '../time';
import { notifySessionChange } from '../channels/session-channel';
import { isSessionLive, loadSessionForCaller, toSessionResource, type SessionRow } from './session-resource';

// Takeover, release and revoke (one session, or every session of a revoked key). Every
// move locks the task row before the session row, the order task paths take too, so a
// takeover, a release, a cancel and the hold sweep never wait on each other in a cycle.

export interface SessionOperationDeps {
  db: Db;
  config: Pick<Config, 'agent' | 'sessions'> & { http: { publicUrl: string } };
}

export const TakeoverBodySchema = z.strictObject({ reason: z.string().max(1000).optional() });
export type TakeoverBody = z.infer<typeof TakeoverBodySchema>;

export const TakeoverResultSchema = z.object({ hold_expires_at: z.string(), paused: z.boolean(), session_id: z.string(), task_id: z.string() });
export type TakeoverResult = z.infer<typeof TakeoverResultSchema>;

export const ReleaseResultSchema = z.object({ resumed: z.boolean(), session_id: z.string(), task_id: z.string() });
export type ReleaseResult = z.infer<typeof ReleaseResultSchema>;

async function lockSession(tx: Tx, sessionId: string): Promise<SessionRow> {
  const [row] = await tx.select().from(sessions).where(eq(sessions.id, sessionId)).for('update');
  return row!;
}

function assertLive(session: SessionRow): void {
  if (!isSessionLive(session)) throw new ApiError('session_expired');
}

/**
 * POST /v1/sessions/{id}/takeover: parks the device's running task (the worker driving
 * it stops without writing) and gives this session the hold, for
 * `config.sessions.holdMs`. A task already parked (the agent asked for help) can be
 * taken over too: a human at the wall is what it waits for. Taking over again from the
 * holding session answers the same hold; another session's hold is 409 device_busy.
 */
export async function takeOver(deps: SessionOperationDeps, principal: Principal, requestId: string, publicId: string, body: TakeoverBody): Promise<TakeoverResult> {
  return deps.db.transaction(async (tx) => {
    const seen = await loadSessionForCaller(tx, principal, publicId);
    const [device] = await tx.select({ status: devices.status, currentTaskId: devices.currentTaskId }).from(devices).where(eq(devices.id, seen.deviceId));
    const task = device?.currentTaskId == null ? null : await lockTask(tx, device.currentTaskId);
    const session = await lockSession(tx, seen.id);
    assertLive(session);
    if (session.mode !== 'control') throw new ApiError('session_not_control');
    if (device?.status === 'terminated') throw new ApiError('device_terminated');
    if (task === null || (task.status !== 'running' && task.status !== 'needs_human')) throw new ApiError('no_running_task');
    const result = (held: SessionRow): TakeoverResult => ({
      hold_expires_at: iso(held.holdExpiresAt!),
      paused: true,
      session_id: toPublicId('session', held.id),
      task_id: toPublicId('task', task.id),
    });
    if (session.holdTaskId === task.id) return result(session);
    const [otherHold] = await tx
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.deviceId, session.deviceId), isNotNull(sessions.holdTaskId), ne(sessions.id, session.id)));
    if (otherHold !== undefined) throw new ApiError('device_busy', { message: 'Another session holds the takeover of this device.' });

    const actor = actorOf(principal, requestId);
    if (task.status === 'running') await parkTask(tx, task, actor, { reason: 'takeover', session_id: toPublicId('session', session.id) });
    const [held] = await tx
      .update(sessions)
      .set({ holdTaskId: task.id, holdExpiresAt: dbNowPlus(deps.config.sessions.holdMs) })
      .where(eq(sessions.id, session.id))
      .returning();
    await recordChange(tx, deps.config.http.publicUrl, actor, held!, 'takeover', { task_id: toPublicId('task', task.id), reason: body.reason ?? null, hold_expires_at: iso(held!.holdExpiresAt!) });
    return result(held!);
  });
}

/**
 * POST /v1/sessions/{id}/release: drops this session's hold and resumes the task it
 * parked (`resumed` false when the task ended meanwhile, say canceled). A session
 * holding nothing is 409 no_running_task.
 */
export async function release(deps: SessionOperationDeps, principal: Principal, requestId: string, publicId: string): Promise<ReleaseResult> {
  return deps.db.transaction(async (tx) => {
    const { session, task } = await lockLiveSessionAndHeldTask(tx, principal, publicId);
    if (session.holdTaskId === null || task === null) throw new ApiError('no_running_task', { message: 'The session holds no takeover to release.' });
    const resumed = await dropHold(tx, deps, actorOf(principal, requestId), session, task, 'released');
    return { resumed, session_id: toPublicId('session', session.id), task_id: toPublicId('task', task.id) };
  });
}

/**
 * DELETE /v1/sessions/{id}: the session stops being live (its open sockets are closed
 * by every gateway on the notification) and a hold it had is dropped, resuming the task.
 * A session already revoked or expired is 410 session_expired.
 */
export async function revokeSession(deps: SessionOperationDeps, principal: Principal, requestId: string, publicId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const { session, task } = await lockLiveSessionAndHeldTask(tx, principal, publicId);
    const actor = actorOf(principal, requestId);
    const [revoked] = await tx.update(sessions).set({ revokedAt: dbNow() }).where(eq(sessions.id, session.id)).returning();
    if (session.holdTaskId !== null && task !== null) await dropHold(tx, deps, actor, revoked!, task, 'revoked');
    await recordChange(tx, deps.config.http.publicUrl, actor, revoked!, 'revoked', {});
  });
}

/**
 * The caller's live session (410 session_expired otherwise) and the task it holds, if any,
 * locked task first: the lock order every path that touches both follows.
 */
async function lockLiveSessionAndHeldTask(tx: Tx, principal: Principal, publicId: string): Promise<{ session: SessionRow; task: TaskRow | null }> {
  const seen = await loadSessionForCaller(tx, principal, publicId);
  const task = seen.holdTaskId === null ? null : await lockTask(tx, seen.holdTaskId);
  const session = await lockSession(tx, seen.id);
  assertLive(session);
  return { session, task };
}

/**
 * Drops holds that lapsed: past their 300 s (CONTRACT.md), or on a session that expired
 * or was revoked. Each task resumes, as on release. Returns how many were dropped.
 */
export async function dropLapsedHolds(deps: SessionOperationDeps, limit = 50): Promise<number> {
  const lapsed = and(
    isNotNull(sessions.holdTaskId),
    or(lte(sessions.holdExpiresAt, sql`now()`), lte(sessions.expiresAt, sql`now()`), isNotNull(sessions.revokedAt)),
  );
  const candidates = await deps.db.select({ id: sessions.id, holdTaskId: sessions.holdTaskId }).from(sessions).where(lapsed).limit(limit);
  let dropped = 0;
  for (const candidate of candidates) {
    const done = await deps.db.transaction(async (tx) => {
      const task = await lockTask(tx, candidate.holdTaskId!);
      const [session] = await tx.select().from(sessions).where(and(eq(sessions.id, candidate.id), lapsed)).for('update');
      if (session === undefined || task === null || session.holdTaskId !== task.id) return false;
      await dropHold(tx, deps, systemActor(session.orgId), session, task, 'hold_lapsed');
      return true;
    });
    if (done) dropped += 1;
  }
  return dropped;
}

/** Clears the hold and resumes its parked task; true when the task resumed. */
async function dropHold(tx: Tx, deps: SessionOperationDeps, actor: Actor, session: SessionRow, task: TaskRow, why: 'released' | 'revoked' | 'hold_lapsed'): Promise<boolean> {
  const [released] = await tx.update(sessions).set({ holdTaskId: null, holdExpiresAt: null }).where(eq(sessions.id, session.id)).returning();
  const resumed = task.status === 'needs_human' && (await resumeParkedTask(tx, task.id, actor, deps.config.agent)) !== null;
  await recordChange(tx, deps.config.http.publicUrl, actor, released!, 'released', { task_id: toPublicId('task', task.id), resumed, why });
  return resumed;
}

/**
 * Revokes, in the caller's transaction (the key's own revocation), every live session the
 * key minted, each as DELETE /v1/sessions/{id} would: audited (actor `system`, why
 * `api_key_revoked`), `operator.session.revoked.v1`, and every instance's gateway closes
 * its sockets on the notification. A hold one of them had is dropped by the session
 * worker within a second, resuming its task: dropping it here would lock the task after
 * the session, against the lock order.
 */
export async function revokeSessionsOfKey(tx: Tx, publicUrl: string, keyId: string): Promise<void> {
  const revoked = await tx
    .update(sessions)
    .set({ revokedAt: dbNow() })
    .where(and(eq(sessions.keyId, keyId), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)))
    .returning();
  for (const row of revoked) await recordChange(tx, publicUrl, systemActor(row.orgId), row, 'revoked', { why: 'api_key_revoked', key_id: keyId });
}

async function recordChange(tx: Tx, publicUrl: string, actor: Actor, row: SessionRow, move: 'takeover' | 'released' | 'revoked', details: Record<string, unknown>): Promise<void> {
  const session = toSessionResource(row, publicUrl);
  await recordAudit(tx, actor, { action: `operator.session.${move}`, resourceType: 'session', resourceId: session.id, spaceId: row.spaceId, details });
  await emitEvent(tx, { orgId: row.orgId, spaceId: row.spaceId, type: `operator.session.${move}.v1`, resource: session });
  await notifySessionChange(tx, row.id);
}
