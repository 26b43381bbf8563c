import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// Every secret a client presents later (API keys, console keys, session tokens, escalation
// bearers, console sign-ins) is 256 random bits, so a plain SHA-256 is a sufficient one-way
// hash: it is what the database keeps, and what a presented secret is compared against.

/**
 * A new secret: `prefix` (which says what it is, and lets the logger mask it) and 256
 * random bits in base64url; with its hash, the only thing the database keeps.
 */
export function mintSecret(prefix: string): { secret: string; hash: string } {
  const secret = `${prefix}${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Whether `secret` hashes to `storedHash`, compared in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const candidate = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return candidate.length === stored.length && timingSafeEqual(candidate, stored);
}
