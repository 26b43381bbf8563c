import { createHash, randomBytes } from 'node:crypto';

// The prefixes of the MCP authorization server's secrets, minted by mintSecret (256 random
// bits; the logger masks them by prefix, server/core/log.ts). Only their SHA-256 is stored.

export const ACCESS_TOKEN_PREFIX = 'mcpat_';
export const REFRESH_TOKEN_PREFIX = 'mcprt_';
export const AUTHORIZATION_CODE_PREFIX = 'mcpcode_';
export const CLIENT_SECRET_PREFIX = 'mcpcs_';
const CLIENT_ID_PREFIX = 'mcpc_';

/** A client_id is public: 128 random bits are enough to keep ids apart. */
export function newClientId(): string {
  return `${CLIENT_ID_PREFIX}${randomBytes(16).toString('base64url')}`;
}

export function isAccessToken(bearer: string): boolean {
  return bearer.startsWith(ACCESS_TOKEN_PREFIX);
}

/** RFC 7636 S256: the challenge is BASE64URL(SHA256(verifier)). */
export function pkceChallengeOf(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}
