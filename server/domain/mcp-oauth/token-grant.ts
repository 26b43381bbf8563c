import { timingSafeEqual } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Db, Tx } from '../../../db/client';
import { apiKeys, mcpOauthGrants, mcpOauthTokens } from '../../../db/schema';
import { systemActor } from '../keys/principal';
import { hashSecret, mintSecret } from '../secret-hash';
import type { OAuthClient } from './oauth-client';
import { OAuthError } from './oauth-error';
import { ACCESS_TOKEN_TTL_SECS, REFRESH_TOKEN_TTL_MS } from './oauth-lifetimes';
import { ACCESS_TOKEN_PREFIX, pkceChallengeOf, REFRESH_TOKEN_PREFIX } from './oauth-secrets';
import { revokeGrant, type GrantRevocationReason } from './revoke-grant';

/** RFC 6749 §5.1's answer. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

const dead = () => new OAuthError('invalid_grant', 'The authorization code or refresh token is invalid, expired, used or revoked.');

/** The token endpoint's request (RFC 6749 §4.1.3, §6), its form's parameters: a code exchanged or a refresh. */
export function grantTokens(db: Db, client: OAuthClient, form: URLSearchParams): Promise<TokenResponse> {
  const required = (name: string) => {
    const value = form.get(name);
    if (value === null) throw new OAuthError('invalid_request', `${name} is required.`);
    return value;
  };
  const grantType = form.get('grant_type');
  if (grantType === 'authorization_code') return exchangeCode(db, client, { code: required('code'), redirectUri: form.get('redirect_uri'), codeVerifier: form.get('code_verifier'), resource: form.get('resource') });
  if (grantType === 'refresh_token') return refreshTokens(db, client, { refreshToken: required('refresh_token'), scope: form.get('scope'), resource: form.get('resource') });
  throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
}

/**
 * grant_type=authorization_code: the code is single use, within 60 s, by the client it
 * was issued to, with the redirect URI it was issued for and the PKCE verifier of its
 * challenge. A code presented again ends the grant it made (RFC 6749 §4.1.2: its tokens
 * are revoked).
 */
export async function exchangeCode(db: Db, client: OAuthClient, input: { code: string; redirectUri: string | null; codeVerifier: string | null; resource: string | null }): Promise<TokenResponse> {
  if (input.codeVerifier === null || !VERIFIER.test(input.codeVerifier)) throw new OAuthError('invalid_request', 'code_verifier (43 to 128 characters) is required.');
  const verifier = input.codeVerifier;
  return inTransactionRevokingOnReuse(db, async (tx) => {
    const [grant] = await tx
      .select()
      .from(mcpOauthGrants)
      .where(eq(mcpOauthGrants.codeHash, hashSecret(input.code)))
      .for('update');
    if (grant === undefined || grant.clientId !== client.id) throw dead();
    if (grant.codeUsedAt !== null) return { reuse: { grantId: grant.id, reason: 'code_reused' } };
    if (grant.revokedAt !== null || grant.codeExpiresAt.getTime() <= Date.now()) throw dead();
    if (input.redirectUri !== grant.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri is not the one the code was issued for.');
    if (input.resource !== null && input.resource !== grant.resource) throw new OAuthError('invalid_target', 'resource is not the one the code was issued for.');
    if (!sameText(pkceChallengeOf(verifier), grant.codeChallenge)) throw new OAuthError('invalid_grant', 'The PKCE code_verifier does not match the code_challenge.');
    await requireLiveKey(tx, grant.keyId);
    await tx.update(mcpOauthGrants).set({ codeUsedAt: new Date() }).where(eq(mcpOauthGrants.id, grant.id));
    return { tokens: await issueTokens(tx, grant.id, grant.scopes) };
  });
}

/**
 * grant_type=refresh_token: the refresh token is single use and rotated; presenting one
 * already used means it leaked (or a client lost a race with itself), and the grant is
 * revoked (OAuth 2.1 §4.3.1, reuse detection).
 */
export async function refreshTokens(db: Db, client: OAuthClient, input: { refreshToken: string; scope: string | null; resource: string | null }): Promise<TokenResponse> {
  return inTransactionRevokingOnReuse(db, async (tx) => {
    const [row] = await tx
      .select({ token: mcpOauthTokens, grant: mcpOauthGrants })
      .from(mcpOauthTokens)
      .innerJoin(mcpOauthGrants, eq(mcpOauthGrants.id, mcpOauthTokens.grantId))
      .where(and(eq(mcpOauthTokens.tokenHash, hashSecret(input.refreshToken)), eq(mcpOauthTokens.kind, 'refresh')))
      .for('update');
    if (row === undefined || row.grant.clientId !== client.id) throw dead();
    if (row.token.usedAt !== null) return { reuse: { grantId: row.grant.id, reason: 'refresh_token_reused' } };
    if (row.grant.revokedAt !== null || row.token.expiresAt.getTime() <= Date.now()) throw dead();
    if (input.resource !== null && input.resource !== row.grant.resource) throw new OAuthError('invalid_target', 'resource is not the one the grant is for.');
    // A refresh may not widen the grant; narrowing is not offered, so the grant's scopes are issued again.
    const asked = input.scope?.trim() ? input.scope.trim().split(/ +/) : [];
    if (asked.some((scope) => !row.grant.scopes.includes(scope))) throw new OAuthError('invalid_scope', 'A refresh cannot add scopes the grant does not hold.');
    await requireLiveKey(tx, row.grant.keyId);
    await tx.update(mcpOauthTokens).set({ usedAt: new Date() }).where(eq(mcpOauthTokens.tokenHash, row.token.tokenHash));
    return { tokens: await issueTokens(tx, row.grant.id, row.grant.scopes) };
  });
}

type Outcome = { tokens: TokenResponse } | { reuse: { grantId: string; reason: GrantRevocationReason } };

/** Runs `work`; a reused code or refresh token revokes its grant in a transaction of its own (the refusal must not roll it back). */
async function inTransactionRevokingOnReuse(db: Db, work: (tx: Tx) => Promise<Outcome>): Promise<TokenResponse> {
  const outcome = await db.transaction(work);
  if ('tokens' in outcome) return outcome.tokens;
  await db.transaction((tx) => revokeGrant(tx, outcome.reuse.grantId, outcome.reuse.reason, (orgId) => systemActor(orgId)));
  throw dead();
}

async function requireLiveKey(tx: Tx, keyId: string): Promise<void> {
  const [key] = await tx
    .select({ keyId: apiKeys.keyId })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyId, keyId), isNull(apiKeys.revokedAt)));
  if (key === undefined) throw new OAuthError('invalid_grant', 'The API key this client was approved with has been revoked.');
}

async function issueTokens(tx: Tx, grantId: string, scopes: string[]): Promise<TokenResponse> {
  const access = mintSecret(ACCESS_TOKEN_PREFIX);
  const refresh = mintSecret(REFRESH_TOKEN_PREFIX);
  const now = Date.now();
  await tx.insert(mcpOauthTokens).values([
    { tokenHash: access.hash, grantId, kind: 'access', expiresAt: new Date(now + ACCESS_TOKEN_TTL_SECS * 1000) },
    { tokenHash: refresh.hash, grantId, kind: 'refresh', expiresAt: new Date(now + REFRESH_TOKEN_TTL_MS) },
  ]);
  return { access_token: access.secret, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECS, refresh_token: refresh.secret, scope: scopes.join(' ') };
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
