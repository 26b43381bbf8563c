import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { devices, sessions } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import type { Principal } from '../keys/principal';
import { parsePublicId } from '../ids';
import { mintSession } from './mint-session';
import { MintedSessionSchema, type MintedSession } from './session-resource';
import { release, revokeSession, takeOver, type ReleaseResult, type SessionOperationDeps } from './session-operations';

// What a person does with a device from a page of the service (the console's device and
// escalation pages, an answer_url's page): watch it, take it over, release it, end the
// page's session. Every move is the /v1 operation itself (mintSession, takeOver, release,
// revokeSession) with the page's caller as the caller, so the same rules hold (device
// active, one hold per device, a task to take over, the hold's 300 s) and the same audit
// events and webhooks are written. The caller decides only who it is and what it reaches.

/**
 * Who drives a live view: a signed-in operator (any organization's device, as that
 * organization; domain/console/operator-live.ts) or an opened answer link (its
 * escalation's device only; domain/answer-links/answer-link-actions.ts).
 */
export interface LiveViewCaller {
  /** The caller as /v1's session operations take it, acting on the device's organization. */
  principalOn(orgId: string): Principal;
  /** The one device (its id) the caller reaches; null for any. */
  deviceId: string | null;
  /** Whether the caller minted a session (by its recorded minter): only its own are its to release or end. */
  minted(minter: string): boolean;
  /** How long the caller's sessions last. */
  ttlSecs(): number;
  /** The reason a takeover is audited with, from the one the page gave. */
  takeOverReason(given: string | undefined): string | undefined;
  /** Refuses a takeover the caller may not start (an answer link whose task moved on). */
  assertMayTakeOver(db: Db): Promise<void>;
}

export const LiveTakeoverSchema = z.object({ session: MintedSessionSchema, hold_expires_at: z.string(), task_id: z.string() });
export type LiveTakeover = z.infer<typeof LiveTakeoverSchema>;

/** The organization of a device the caller reaches; 404 device_not_found for any other. */
async function orgOfDevice(db: Db, caller: LiveViewCaller, devicePublicId: string): Promise<string> {
  const id = parsePublicId('device', devicePublicId);
  const [row] = id === null ? [] : await db.select({ orgId: devices.orgId }).from(devices).where(eq(devices.id, id));
  if (row === undefined || (caller.deviceId !== null && caller.deviceId !== id)) throw new ApiError('device_not_found');
  return row.orgId;
}

/** The organization of a session the caller minted; 404 session_not_found for any other (an organization's own sessions are its business). */
async function orgOfOwnSession(db: Db, caller: LiveViewCaller, sessionPublicId: string): Promise<string> {
  const id = parsePublicId('session', sessionPublicId);
  const [row] = id === null ? [] : await db.select({ orgId: sessions.orgId, keyId: sessions.keyId }).from(sessions).where(eq(sessions.id, id));
  if (row === undefined || !caller.minted(row.keyId)) throw new ApiError('session_not_found');
  return row.orgId;
}

/** A watch session of the device for the page's live view (POST /v1/devices/{id}/sessions's rules). */
export async function watchDevice(deps: SessionOperationDeps, caller: LiveViewCaller, requestId: string, devicePublicId: string): Promise<MintedSession> {
  const principal = caller.principalOn(await orgOfDevice(deps.db, caller, devicePublicId));
  return mintSession(deps.db, deps.config.http.publicUrl, { principal, requestId, devicePublicId, body: { mode: 'watch', ttl_secs: caller.ttlSecs() } });
}

/**
 * Takes the device over: a control session, then its takeover (the task parks, or stays
 * parked). A refused takeover (another session holds the device, no task to take over)
 * revokes the session it minted, so nothing is left live.
 */
export async function takeOverDevice(deps: SessionOperationDeps, caller: LiveViewCaller, requestId: string, devicePublicId: string, reason: string | undefined): Promise<LiveTakeover> {
  const principal = caller.principalOn(await orgOfDevice(deps.db, caller, devicePublicId));
  await caller.assertMayTakeOver(deps.db);
  const session = await mintSession(deps.db, deps.config.http.publicUrl, { principal, requestId, devicePublicId, body: { mode: 'control', ttl_secs: caller.ttlSecs() } });
  try {
    const held = await takeOver(deps, principal, requestId, session.id, { reason: caller.takeOverReason(reason) });
    return { session, hold_expires_at: held.hold_expires_at, task_id: held.task_id };
  } catch (error) {
    await revokeSession(deps, principal, requestId, session.id).catch(() => undefined);
    throw error;
  }
}

/** Releases a takeover the caller holds; the task resumes (POST /v1/sessions/{id}/release's rules). */
export async function releaseTakeover(deps: SessionOperationDeps, caller: LiveViewCaller, requestId: string, sessionPublicId: string): Promise<ReleaseResult> {
  return release(deps, caller.principalOn(await orgOfOwnSession(deps.db, caller, sessionPublicId)), requestId, sessionPublicId);
}

/**
 * Ends a session the caller minted when its page closes (DELETE /v1/sessions/{id}'s
 * rules: a hold it had is dropped and the task resumes), so a closed page stops being
 * metered; one already ended is 410 session_expired.
 */
export async function endLiveSession(deps: SessionOperationDeps, caller: LiveViewCaller, requestId: string, sessionPublicId: string): Promise<void> {
  await revokeSession(deps, caller.principalOn(await orgOfOwnSession(deps.db, caller, sessionPublicId)), requestId, sessionPublicId);
}
