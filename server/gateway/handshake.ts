import type { IncomingMessage } from 'node:http';
import type { Db } from '../../db/client';
import { openLiveViewSession } from '../domain/sessions/live-view-session';
import type { SessionRow } from '../domain/sessions/session-resource';
import { ApiError } from '../core/errors';
import { SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX } from './gateway-messages';

const WS_PATH = /^\/v1\/sessions\/([^/?#]+)\/ws\/?(?:\?.*)?$/i;

/** The public session id of a gateway URL, or null when the URL is not the gateway's. */
export function gatewaySessionId(url: string | undefined): string | null {
  return WS_PATH.exec(url ?? '')?.[1] ?? null;
}

/**
 * Checks a WebSocket handshake for a session: the `svc.operator.v1` subprotocol and the
 * token offered as `svc.token.<token>` (never read from the URL); the session domain then
 * checks the token, the session and its device. Throws the ApiError to answer with.
 */
export async function authenticateHandshake(db: Db, req: IncomingMessage, publicId: string): Promise<SessionRow> {
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((value) => value.trim());
  if (!offered.includes(SUBPROTOCOL)) throw new ApiError('invalid_session_token');
  const token = offered.find((value) => value.startsWith(TOKEN_SUBPROTOCOL_PREFIX))?.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
  return openLiveViewSession(db, publicId, token ?? null);
}
