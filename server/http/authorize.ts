import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors';
import type { Principal } from '../domain/keys/principal';
import type { Scope } from '../domain/keys/scopes';
import type { Services } from '../services';

/**
 * The checks every route starts with, in CONTRACT.md's order: authenticate (401; an
 * address that failed too often is refused 429 before its key is looked at), rate limit
 * (429), scope (403; `anyOf` null means any valid key). Used by the tRPC guard and by
 * routes served outside tRPC (the task event stream).
 */
export async function authorizeRequest(services: Services, req: IncomingMessage, res: ServerResponse, anyOf: readonly Scope[] | null): Promise<Principal> {
  const principal = await services.authThrottle.check(req, () => services.authenticator.authenticate(req.headers.authorization));
  await services.rateLimiter.consume(principal.keyId, res);
  if (anyOf !== null && !anyOf.some((scope) => principal.scopes.has(scope))) throw new ApiError('insufficient_scope');
  return principal;
}
