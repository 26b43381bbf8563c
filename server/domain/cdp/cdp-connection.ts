import { and, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../../db/client';
import { apiKeys, cdpSessions, devices, type CdpCloseReason } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { dbNow } from '../db-clock';
import { parsePublicId, toPublicId } from '../ids';
import { actorOf, systemActor, type Actor, type Principal } from '../keys/principal';
import { secretMatches } from '../secret-hash';
import { isCdpSecretShaped } from './cdp-secret';
import { auditedCdpSession, isCdpSessionOpen, loadCdpSessionForCaller, type CdpSessionRow } from './cdp-session-resource';

// The life of a CDP connection in the database. A connection holds the device's task
// slot in devices.cdp_session_id (task submits check it as they check current_task_id,
// and idle suspend and sleep leave such a device alone). When its client disconnects, the
// slot is given back and the session waits, held by no instance (connection_host_id null),
// for the same secret to connect it again, one connection at a time, until it is deleted
// or expires; a reconnection takes the slot again if it is free. A connection the service
// itself closed with 1012 (its instance stopped, or handed the device over) waits for its
// client keeping the slot: the client did not choose to leave. The instance holding a
// socket renews heartbeat_at, and a connection whose instance stopped renewing is closed
// by any instance's sweep, freeing the slot.

/** Past this without a heartbeat, a connection's instance is taken to be gone. */
export const CDP_HEARTBEAT_STALE_MS = 30_000;

/**
 * Whether the session may connect now: open, and no instance holds a connection of it
 * (never used, or waiting for its client to come back). Never two connections at once.
 */
function mayConnect(row: CdpSessionRow): boolean {
  return isCdpSessionOpen(row) && row.connectionHostId === null;
}

/**
 * The open CDP session `publicId` names, if `secret` is its own, connected now or not;
 * nothing changes. The instance a handshake reached uses it to find the device before
 * relaying (the device's own instance claims, and refuses a session connected now), and
 * the DevTools HTTP endpoint (`…/devtools/json/version`) before it points at the socket.
 * Unknown ids and wrong secrets are the same 401 invalid_session_token; closed or expired
 * is 410 session_expired.
 */
export async function openCdpSessionBySecret(db: Db, publicId: string, secret: string | null): Promise<CdpSessionRow> {
  const id = parsePublicId('cdpSession', publicId);
  if (id === null || secret === null || !isCdpSecretShaped(secret)) throw new ApiError('invalid_session_token');
  const [row] = await db.select().from(cdpSessions).where(eq(cdpSessions.id, id));
  if (row === undefined || !secretMatches(secret, row.secretHash)) throw new ApiError('invalid_session_token');
  if (!isCdpSessionOpen(row)) throw new ApiError('session_expired');
  return row;
}

/**
 * Uses the secret and takes the device's slot for this connection, on `hostId` (the
 * instance running the device's browser), in one transaction: the secret never opens two
 * connections at once, and of a task submit and a connection only one wins the slot. A
 * session waiting for its client after a 1012 holds the slot already and takes it on.
 */
export async function claimCdpConnection(db: Db, hostId: string, publicId: string, secret: string | null): Promise<CdpSessionRow> {
  const seen = await openCdpSessionBySecret(db, publicId, secret);
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(cdpSessions).where(eq(cdpSessions.id, seen.id)).for('update');
    if (row === undefined || !mayConnect(row)) throw new ApiError('session_expired');
    const reconnecting = row.connectedAt !== null;
    const [key] = await tx.select({ revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.keyId, row.keyId));
    if (key === undefined || key.revokedAt !== null) throw new ApiError('session_expired');
    const [device] = await tx.select().from(devices).where(eq(devices.id, row.deviceId)).for('update');
    if (device === undefined || device.status === 'terminated') throw new ApiError('device_terminated');
    if (device.status !== 'active') throw new ApiError('device_not_ready');
    if (device.currentTaskId !== null) throw new ApiError('device_busy');
    if (device.cdpSessionId !== null && device.cdpSessionId !== row.id) throw new ApiError('device_busy', { message: 'Another CDP connection holds the device.' });
    await tx.update(devices).set({ cdpSessionId: row.id, lastActiveAt: dbNow() }).where(eq(devices.id, device.id));
    const [connected] = await tx
      .update(cdpSessions)
      .set({ ...(reconnecting ? {} : { connectedAt: dbNow() }), connectionHostId: hostId, heartbeatAt: dbNow() })
      .where(eq(cdpSessions.id, row.id))
      .returning();
    await recordAudit(
      tx,
      { orgId: row.orgId, actor: row.keyId, requestId: null },
      { action: 'operator.cdp_session.connected', ...auditedCdpSession(row), details: { device_id: toPublicId('device', row.deviceId), reconnected: reconnecting } },
    );
    return connected!;
  });
}

/** Closes the session (if still open) and gives the device's slot back (if it still holds it). */
async function closeAndFree(tx: Tx, actor: Actor, row: CdpSessionRow, reason: CdpCloseReason): Promise<void> {
  await tx.update(cdpSessions).set({ closedAt: dbNow(), closeReason: reason }).where(eq(cdpSessions.id, row.id));
  await tx
    .update(devices)
    .set({ cdpSessionId: null, lastActiveAt: dbNow() })
    .where(and(eq(devices.id, row.deviceId), eq(devices.cdpSessionId, row.id)));
  await recordAudit(tx, actor, { action: 'operator.cdp_session.closed', ...auditedCdpSession(row), details: { device_id: toPublicId('device', row.deviceId), reason } });
}

/** The connection ended (client, expiry, revocation, device gone): recorded once, slot freed. */
export async function releaseCdpConnection(db: Db, cdpSessionId: string, reason: CdpCloseReason): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.select().from(cdpSessions).where(eq(cdpSessions.id, cdpSessionId)).for('update');
    if (row === undefined) return;
    if (row.closedAt !== null) {
      // Closed already (DELETE): only the slot may still need giving back.
      await tx.update(devices).set({ cdpSessionId: null }).where(and(eq(devices.id, row.deviceId), eq(devices.cdpSessionId, row.id)));
      return;
    }
    // An expired session closes as expired, whatever ended its socket last.
    await closeAndFree(tx, systemActor(row.orgId), row, row.expiresAt <= new Date() ? 'expired' : reason);
  });
}

/**
 * DELETE /v1/cdp_sessions/{id}: the session closes, its connection (on whichever
 * instance) within a second, and the device's slot is free at once. Closed or expired
 * already: 410 session_expired.
 */
export async function deleteCdpSession(db: Db, principal: Principal, requestId: string, publicId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await loadCdpSessionForCaller(tx, principal, publicId);
    if (!isCdpSessionOpen(row)) throw new ApiError('session_expired');
    await closeAndFree(tx, actorOf(principal, requestId), row, 'deleted');
  });
}

/**
 * Of the sessions `ids` (connected here, or waiting for their client), those that must end
 * now, with why: closed by DELETE, expired, their key revoked, or their device gone. A
 * connected one's device is gone when it is no longer active or no longer held by it
 * (deleted, slept, lost); a waiting one's only when it is terminated: between connections
 * the device may run a task or sleep, and a reconnection then waits for it (409).
 */
export async function endedCdpConnections(db: Db, ids: string[]): Promise<Map<string, CdpCloseReason>> {
  const ended = new Map<string, CdpCloseReason>();
  if (ids.length === 0) return ended;
  const rows = await db
    .select({
      id: cdpSessions.id,
      closedAt: cdpSessions.closedAt,
      closeReason: cdpSessions.closeReason,
      expiresAt: cdpSessions.expiresAt,
      keyRevokedAt: apiKeys.revokedAt,
      deviceStatus: devices.status,
      deviceHolder: devices.cdpSessionId,
      connectionHostId: cdpSessions.connectionHostId,
    })
    .from(cdpSessions)
    .leftJoin(apiKeys, eq(apiKeys.keyId, cdpSessions.keyId))
    .leftJoin(devices, eq(devices.id, cdpSessions.deviceId))
    .where(inArray(cdpSessions.id, ids));
  const now = new Date();
  const found = new Set(rows.map((row) => row.id));
  for (const id of ids) if (!found.has(id)) ended.set(id, 'device_gone');
  for (const row of rows) {
    if (row.closedAt !== null) ended.set(row.id, row.closeReason ?? 'deleted');
    else if (row.expiresAt <= now) ended.set(row.id, 'expired');
    else if (row.keyRevokedAt !== null) ended.set(row.id, 'key_revoked');
    else if (row.connectionHostId === null ? row.deviceStatus === 'terminated' : row.deviceStatus !== 'active' || row.deviceHolder !== row.id) ended.set(row.id, 'device_gone');
  }
  return ended;
}

/** Why a connection ended while its session stays open: its client left, or the service asked it to reconnect. */
export type CdpDisconnectReason = 'client_closed' | 'service_restart';

/**
 * The connection on `hostId` ended but its session did not: its client disconnected (or
 * sent Browser.close), or the service closed it with 1012 (the instance stops, or hands
 * the device over). The session waits, held by no instance, for its client to connect
 * again, to any instance, until it expires or is deleted (endUnresumableCdpConnections).
 * A client that left gives the device's slot back (tasks may run meanwhile); after a 1012
 * the session keeps it. Audited per connection, as its connection was.
 */
export async function awaitCdpReconnect(db: Db, row: CdpSessionRow, hostId: string, reason: CdpDisconnectReason): Promise<void> {
  await db.transaction(async (tx) => {
    const [waiting] = await tx
      .update(cdpSessions)
      .set({ connectionHostId: null, heartbeatAt: null })
      .where(and(eq(cdpSessions.id, row.id), eq(cdpSessions.connectionHostId, hostId), isNull(cdpSessions.closedAt)))
      .returning({ id: cdpSessions.id });
    if (waiting === undefined) return;
    if (reason === 'client_closed') {
      await tx
        .update(devices)
        .set({ cdpSessionId: null, lastActiveAt: dbNow() })
        .where(and(eq(devices.id, row.deviceId), eq(devices.cdpSessionId, row.id)));
    }
    await recordAudit(
      tx,
      { orgId: row.orgId, actor: row.keyId, requestId: null },
      { action: 'operator.cdp_session.disconnected', ...auditedCdpSession(row), details: { device_id: toPublicId('device', row.deviceId), reason } },
    );
  });
}

/**
 * Ends the connections waiting for their client (awaitCdpReconnect) that no client may
 * take on any more, for the reasons a held one would end (expired, key revoked, device
 * gone), freeing the slot. Returns how many were ended.
 */
export async function endUnresumableCdpConnections(db: Db): Promise<number> {
  const waiting = await db
    .select({ id: cdpSessions.id })
    .from(cdpSessions)
    .where(and(isNotNull(cdpSessions.connectedAt), isNull(cdpSessions.connectionHostId), isNull(cdpSessions.closedAt)));
  const ended = await endedCdpConnections(db, waiting.map((row) => row.id));
  for (const [id, reason] of ended) await releaseCdpConnection(db, id, reason);
  return ended.size;
}

/** The holding instance's sign of life for its open connections. */
export async function heartbeatCdpConnections(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.update(cdpSessions).set({ heartbeatAt: dbNow() }).where(and(inArray(cdpSessions.id, ids), isNull(cdpSessions.closedAt)));
}

/**
 * Closes connections nobody holds any more: `hostId`'s (at its start, its sockets died
 * with its previous process), or, without one, any whose instance stopped renewing them.
 * Returns how many were closed.
 */
export async function closeAbandonedCdpConnections(db: Db, hostId: string | null): Promise<number> {
  const open = and(isNotNull(cdpSessions.connectedAt), isNull(cdpSessions.closedAt));
  const abandoned = hostId !== null ? and(open, eq(cdpSessions.connectionHostId, hostId)) : and(open, lt(cdpSessions.heartbeatAt, sql`now() - make_interval(secs => ${CDP_HEARTBEAT_STALE_MS / 1000})`));
  const rows = await db.select({ id: cdpSessions.id }).from(cdpSessions).where(abandoned);
  for (const { id } of rows) await releaseCdpConnection(db, id, 'host_lost');
  return rows.length;
}
