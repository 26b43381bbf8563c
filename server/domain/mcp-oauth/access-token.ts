import { and, eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { apiKeys, mcpOauthGrants, mcpOauthTokens, organizations } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { isScope } from '../keys/scopes';
import { hashSecret } from '../secret-hash';

/**
 * The principal of an MCP access token: the key it was approved with, limited to the
 * grant's scopes, and marked with the grant (audit events name it). Looked up on every
 * /mcp request, with no cache: a revoked grant or key, or an expired token, is refused at
 * once. Refused like a bad key (401 invalid_api_key) whatever the reason, and only for the
 * audience it was issued for (`resource`, the service's /mcp).
 */
export async function authenticateAccessToken(db: Db, resource: string, token: string): Promise<Principal> {
  const [row] = await db
    .select({
      grantId: mcpOauthGrants.id,
      grantScopes: mcpOauthGrants.scopes,
      grantRevokedAt: mcpOauthGrants.revokedAt,
      grantResource: mcpOauthGrants.resource,
      expiresAt: mcpOauthTokens.expiresAt,
      keyId: apiKeys.keyId,
      keyScopes: apiKeys.scopes,
      keyRevokedAt: apiKeys.revokedAt,
      orgId: apiKeys.orgId,
      spaceIds: apiKeys.spaceIds,
      entitled: organizations.entitled,
    })
    .from(mcpOauthTokens)
    .innerJoin(mcpOauthGrants, eq(mcpOauthGrants.id, mcpOauthTokens.grantId))
    .innerJoin(apiKeys, eq(apiKeys.keyId, mcpOauthGrants.keyId))
    .innerJoin(organizations, eq(organizations.id, apiKeys.orgId))
    .where(and(eq(mcpOauthTokens.tokenHash, hashSecret(token)), eq(mcpOauthTokens.kind, 'access')));
  if (row === undefined || row.grantRevokedAt !== null || row.keyRevokedAt !== null || row.expiresAt.getTime() <= Date.now() || row.grantResource !== resource) {
    throw new ApiError('invalid_api_key', { message: 'The bearer is not a valid API key or MCP access token (an access token lasts an hour, and ends with its grant or its key).' });
  }
  return {
    keyId: row.keyId,
    orgId: row.orgId,
    scopes: new Set(row.grantScopes.filter((scope) => isScope(scope) && row.keyScopes.includes(scope)).filter(isScope)),
    spaceIds: row.spaceIds,
    entitled: row.entitled,
    oauthGrantId: toPublicId('mcpGrant', row.grantId),
  };
}
