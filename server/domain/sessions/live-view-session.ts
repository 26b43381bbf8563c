import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, sessions } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId } from '../ids';
import { secretMatches } from '../secret-hash';
import { isSessionLive, type SessionRow } from './session-resource';
import { isSessionTokenShaped } from './session-token';

/**
 * The session a live-view socket opens with its token, checked against the session's
 * stored hash; the session live; its device active. Throws the ApiError to refuse the
 * handshake with. A malformed or unknown id and a wrong token are the same 401, so the
 * gateway never tells a caller without the token whether a session exists.
 */
export async function openLiveViewSession(db: Db, publicId: string, token: string | null): Promise<SessionRow> {
  const id = parsePublicId('session', publicId);
  if (token === null || !isSessionTokenShaped(token) || id === null) throw new ApiError('invalid_session_token');
  const [session] = await db.select().from(sessions).where(eq(sessions.id, id));
  if (session === undefined || !secretMatches(token, session.tokenHash)) throw new ApiError('invalid_session_token');
  if (!isSessionLive(session)) throw new ApiError('session_expired');
  const [device] = await db.select({ status: devices.status }).from(devices).where(eq(devices.id, session.deviceId));
  if (device?.status === 'terminated') throw new ApiError('device_terminated');
  if (device?.status !== 'active') throw new ApiError('device_not_ready');
  return session;
}

/** The session as stored now, or null once it is gone: open sockets re-read it on every change notification. */
export async function currentSession(db: Db, sessionId: string): Promise<SessionRow | null> {
  const [row] = await db.select().from(sessions).where(eq(sessions.id, sessionId));
  return row ?? null;
}
