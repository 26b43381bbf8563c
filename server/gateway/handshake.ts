import type { IncomingMessage } from 'node:http';
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { devices, sessions } from '../../db/schema';
import { parsePublicId } from '../domain/ids';
import { isSessionLive, type SessionRow } from '../domain/sessions/session-resource';
import { isSessionTokenShaped } from '../domain/sessions/session-token';
import { secretMatches } from '../domain/secret-hash';
import { ApiError } from '../errors';
import { SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX } from './gateway-messages';

const WS_PATH = /^\/v1\/sessions\/([^/?#]+)\/ws\/?(?:\?.*)?$/i;

/** The public session id of a gateway URL, or null when the URL is not the gateway's. */
export function gatewaySessionId(url: string | undefined): string | null {
  return WS_PATH.exec(url ?? '')?.[1] ?? null;
}

/**
 * Checks a WebSocket handshake for a session: the `svc.operator.v1` subprotocol and the
 * token offered as `svc.token.<token>` (never read from the URL), against the session's
 * stored hash; the session live; its device active. Throws the ApiError to answer with.
 */
export async function authenticateHandshake(db: Db, req: IncomingMessage, publicId: string): Promise<SessionRow> {
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((value) => value.trim());
  const token = offered.find((value) => value.startsWith(TOKEN_SUBPROTOCOL_PREFIX))?.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
  const id = parsePublicId('session', publicId);
  if (!offered.includes(SUBPROTOCOL) || token === undefined || !isSessionTokenShaped(token) || id === null) throw new ApiError('invalid_session_token');
  const [session] = await db.select().from(sessions).where(eq(sessions.id, id));
  if (session === undefined || !secretMatches(token, session.tokenHash)) throw new ApiError('invalid_session_token');
  if (!isSessionLive(session)) throw new ApiError('session_expired');
  const [device] = await db.select({ status: devices.status }).from(devices).where(eq(devices.id, session.deviceId));
  if (device?.status === 'terminated') throw new ApiError('device_terminated');
  if (device?.status !== 'active') throw new ApiError('device_not_ready');
  return session;
}
