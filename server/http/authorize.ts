import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../core/errors';
import type { Principal } from '../domain/keys/principal';
import type { Scope } from '../domain/keys/scopes';
import type { Authenticator } from '../domain/keys/authenticate';
import type { RateLimiter } from '../domain/rate-limit/rate-limiter';
import type { AuthFailureThrottle } from './auth-failure-throttle';

/** What the checks need; the service's Services carries them. */
export interface RequestGuards {
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  authThrottle: AuthFailureThrottle;
}

/**
 * The checks every route starts with, in CONTRACT.md's order: authenticate (401; an
 * address that failed too often is refused 429 before its key is looked at), rate limit
 * (429), scope (403; `anyOf` null means any valid key). Used by the tRPC guard and by
 * routes served outside tRPC (the task event stream). `authenticated`: who the caller
 * already authenticated (/mcp, for its tools), then the checks start at the rate limit.
 */
export async function authorizeRequest(services: RequestGuards, req: IncomingMessage, res: ServerResponse, anyOf: readonly Scope[] | null, authenticated?: Principal): Promise<Principal> {
  const principal = authenticated ?? (await services.authThrottle.check(req, () => services.authenticator.authenticate(req.headers.authorization)));
  await services.rateLimiter.consume(principal.keyId, res);
  if (anyOf !== null && !anyOf.some((scope) => principal.scopes.has(scope))) throw new ApiError('insufficient_scope');
  return principal;
}
