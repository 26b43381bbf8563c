import type { Db } from '../../../db/client';
import { mcpOauthGrants } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { toPublicId } from '../ids';
import { actorOf, type Principal } from '../keys/principal';
import { scopes as allScopes, type Scope } from '../keys/scopes';
import { mintSecret } from '../secret-hash';
import type { AuthorizationRequest } from './authorization-request';
import { AUTHORIZATION_CODE_TTL_MS } from './oauth-lifetimes';
import { AUTHORIZATION_CODE_PREFIX } from './oauth-secrets';

/** The scopes a grant gets: those asked for that the key holds (all of the key's when none were named). */
export function grantedScopes(request: AuthorizationRequest, principal: Principal): Scope[] {
  return (request.scopes ?? allScopes).filter((scope) => principal.scopes.has(scope));
}

/**
 * A person approved the client with an API key: the grant is recorded (audited
 * `operator.oauth_grant.created`, actor the key) and its authorization code returned, to
 * be sent to the client's redirect URI. Null when the key holds none of the scopes asked for.
 */
export async function approveGrant(db: Db, request: AuthorizationRequest, principal: Principal, requestId: string): Promise<{ code: string; scopes: Scope[] } | null> {
  const scopes = grantedScopes(request, principal);
  if (scopes.length === 0) return null;
  const { secret: code, hash: codeHash } = mintSecret(AUTHORIZATION_CODE_PREFIX);
  await db.transaction(async (tx) => {
    const [grant] = await tx
      .insert(mcpOauthGrants)
      .values({
        clientId: request.client.id,
        orgId: principal.orgId,
        keyId: principal.keyId,
        scopes,
        resource: request.resource,
        codeHash,
        codeChallenge: request.codeChallenge,
        redirectUri: request.redirectUri,
        codeExpiresAt: new Date(Date.now() + AUTHORIZATION_CODE_TTL_MS),
      })
      .returning({ id: mcpOauthGrants.id });
    await recordAudit(tx, actorOf(principal, requestId), {
      action: 'operator.oauth_grant.created',
      resourceType: 'oauth_grant',
      resourceId: toPublicId('mcpGrant', grant!.id),
      details: { client_id: request.client.clientId, client_name: request.client.clientName, redirect_uri: request.redirectUri, scopes, resource: request.resource },
    });
  });
  return { code, scopes };
}
