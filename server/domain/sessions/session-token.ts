import { randomBytes } from 'node:crypto';
import { hashSecret } from '../secret-hash';

// Session tokens: `sestok_` plus 32 random bytes in base64url, shown once on mint; only
// the SHA-256 is kept. Clients present them on the WebSocket handshake as the
// subprotocol `svc.token.<token>`, never in a URL.
const PREFIX = 'sestok_';
const TOKEN_PATTERN = /^sestok_[A-Za-z0-9_-]{43}$/;

export function mintSessionToken(): { token: string; hash: string } {
  const token = `${PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashSecret(token) };
}

export function isSessionTokenShaped(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}
