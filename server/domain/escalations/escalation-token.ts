import { mintSecret, secretMatches } from '../secret-hash';

// The per-escalation bearer of the resolve callback: `esctok_` plus 32 random bytes in
// base64url. Only its SHA-256 is stored; every delivery attempt mints a fresh one and
// adds its hash, so a retry never needs a stored bearer and any bearer sent still works.
const PREFIX = 'esctok_';
const TOKEN_PATTERN = /^esctok_[A-Za-z0-9_-]{43}$/;

export function mintEscalationToken(): { token: string; hash: string } {
  const { secret, hash } = mintSecret(PREFIX);
  return { token: secret, hash };
}

/** Whether `token` is one of the bearers whose hashes are stored, compared in constant time. */
export function matchesEscalationToken(token: string, storedHashes: readonly string[]): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  // Every stored hash is compared, so the time taken does not tell which one matched.
  return storedHashes.map((stored) => secretMatches(token, stored)).includes(true);
}
