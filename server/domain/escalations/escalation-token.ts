import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// The per-escalation bearer of the resolve callback: `esctok_` plus 32 random bytes in
// base64url. Only its SHA-256 is stored; every delivery attempt mints a fresh one and
// adds its hash, so a retry never needs a stored bearer and any bearer sent still works.
const PREFIX = 'esctok_';
const TOKEN_PATTERN = /^esctok_[A-Za-z0-9_-]{43}$/;

export function mintEscalationToken(): { token: string; hash: string } {
  const token = `${PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashEscalationToken(token) };
}

export function hashEscalationToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether `token` is one of the bearers whose hashes are stored, compared in constant time. */
export function matchesEscalationToken(token: string, storedHashes: readonly string[]): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  const given = Buffer.from(hashEscalationToken(token), 'hex');
  let matched = false;
  for (const stored of storedHashes) {
    const candidate = Buffer.from(stored, 'hex');
    // Every stored hash is compared, so the time taken does not tell which one matched.
    if (candidate.length === given.length && timingSafeEqual(candidate, given)) matched = true;
  }
  return matched;
}

/** The bearer from an `Authorization: Bearer <token>` header, or null. */
export function bearerFrom(header: string | undefined): string | null {
  return /^Bearer (\S+)$/.exec(header ?? '')?.[1] ?? null;
}
