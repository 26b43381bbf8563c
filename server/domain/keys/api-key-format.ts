import { randomBytes } from 'node:crypto';

// svc_operator_<env>_<key_id>_<secret> (CONTRACT.md): key_id is 12 lowercase base32
// characters, secret is 43 base64url characters without `_` so the key splits cleanly.
const KEY_PATTERN = /^svc_operator_(live|test)_([a-z2-7]{12})_([A-Za-z0-9-]{43})$/;
const BASE32_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export type KeyEnv = 'live' | 'test';

export interface ParsedApiKey {
  env: KeyEnv;
  keyId: string;
  secret: string;
}

export function parseApiKey(key: string): ParsedApiKey | null {
  const match = KEY_PATTERN.exec(key);
  if (match === null) return null;
  const [, env, keyId, secret] = match;
  return { env: env as KeyEnv, keyId: keyId!, secret: secret! };
}

export function generateKeyId(): string {
  const bytes = randomBytes(12);
  return Array.from(bytes, (byte) => BASE32_ALPHABET[byte & 31]).join('');
}

/** 32 random bytes in base64url, drawn again until free of `_` to keep them uniform. */
export function generateSecret(): string {
  for (;;) {
    const secret = randomBytes(32).toString('base64url');
    if (!secret.includes('_')) return secret;
  }
}

export function formatApiKey(env: KeyEnv, keyId: string, secret: string): string {
  return `svc_operator_${env}_${keyId}_${secret}`;
}

export function maskApiKey(env: KeyEnv, keyId: string): string {
  return `svc_operator_${env}_${keyId}_****`;
}
