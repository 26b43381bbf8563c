import { and, eq, isNull } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../../db/client';
import { mcpOauthGrants, mcpOauthTokens } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { toPublicId } from '../ids';
import { systemActor, type Actor } from '../keys/principal';
import { hashSecret } from '../secret-hash';
import type { OAuthClient } from './oauth-client';

export type GrantRevocationReason = 'client_revoked' | 'api_key_revoked' | 'code_reused' | 'refresh_token_reused';

/** Ends a grant and with it every token issued for it; audited `operator.oauth_grant.revoked`. Nothing when it already ended. */
export async function revokeGrant(tx: DbOrTx, grantId: string, reason: GrantRevocationReason, actor: (orgId: string, keyId: string) => Actor): Promise<void> {
  const [grant] = await tx
    .update(mcpOauthGrants)
    .set({ revokedAt: new Date(), revokedReason: reason })
    .where(and(eq(mcpOauthGrants.id, grantId), isNull(mcpOauthGrants.revokedAt)))
    .returning({ orgId: mcpOauthGrants.orgId, keyId: mcpOauthGrants.keyId });
  if (grant === undefined) return;
  await recordAudit(tx, actor(grant.orgId, grant.keyId), {
    action: 'operator.oauth_grant.revoked',
    resourceType: 'oauth_grant',
    resourceId: toPublicId('mcpGrant', grantId),
    details: { why: reason },
  });
}

/**
 * RFC 7009: the client revokes its access or refresh token, which ends the whole grant
 * (both kinds, so the person's approval is gone, not just one token). A token the client
 * does not hold, or that does not exist, is answered the same (200, nothing done), so the
 * endpoint tells nobody which tokens exist.
 */
export async function revokeTokenOfClient(db: Db, client: OAuthClient, token: string, requestId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx
      .select({ grantId: mcpOauthGrants.id, clientId: mcpOauthGrants.clientId })
      .from(mcpOauthTokens)
      .innerJoin(mcpOauthGrants, eq(mcpOauthGrants.id, mcpOauthTokens.grantId))
      .where(eq(mcpOauthTokens.tokenHash, hashSecret(token)));
    if (row === undefined || row.clientId !== client.id) return;
    // The key the client acted as revoked it, through the client.
    await revokeGrant(tx, row.grantId, 'client_revoked', (orgId, keyId) => ({ orgId, actor: keyId, requestId }));
  });
}

/** A revoked API key ends every grant made with it, in the key's own revocation transaction. */
export async function revokeGrantsOfKey(tx: DbOrTx, keyId: string): Promise<void> {
  const live = await tx
    .select({ id: mcpOauthGrants.id })
    .from(mcpOauthGrants)
    .where(and(eq(mcpOauthGrants.keyId, keyId), isNull(mcpOauthGrants.revokedAt)));
  for (const grant of live) await revokeGrant(tx, grant.id, 'api_key_revoked', (orgId) => systemActor(orgId));
}
