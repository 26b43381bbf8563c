import { mintSecret } from '../secret-hash';

// Session tokens: `sestok_` plus 32 random bytes in base64url, shown once on mint; only
// the SHA-256 is kept. Clients present them on the WebSocket handshake as the
// subprotocol `svc.token.<token>`, never in a URL.
const PREFIX = 'sestok_';
const TOKEN_PATTERN = /^sestok_[A-Za-z0-9_-]{43}$/;

export function mintSessionToken(): { token: string; hash: string } {
  const { secret, hash } = mintSecret(PREFIX);
  return { token: secret, hash };
}

export function isSessionTokenShaped(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/** The live-view WebSocket protocol, offered as a subprotocol beside the token. */
export const LIVE_VIEW_SUBPROTOCOL = 'svc.operator.v1';
const TOKEN_SUBPROTOCOL_PREFIX = 'svc.token.';

/**
 * The session token a WebSocket handshake offers as the subprotocol `svc.token.<token>`
 * beside `svc.operator.v1` (never read from the URL), or null when it offers none.
 */
export function offeredSessionToken(offered: readonly string[]): string | null {
  if (!offered.includes(LIVE_VIEW_SUBPROTOCOL)) return null;
  return offered.find((value) => value.startsWith(TOKEN_SUBPROTOCOL_PREFIX))?.slice(TOKEN_SUBPROTOCOL_PREFIX.length) ?? null;
}
