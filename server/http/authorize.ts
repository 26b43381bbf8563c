import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors';
import type { Principal } from '../domain/keys/principal';
import type { Scope } from '../domain/keys/scopes';
import type { Services } from '../services';
import { toApiError } from './to-api-error';

/** 403 insufficient_scope unless the key holds one of the accepted scopes. */
export function requireScope(principal: Principal, accepted: readonly Scope[]): void {
  if (!accepted.some((scope) => principal.scopes.has(scope))) throw new ApiError('insufficient_scope');
}

/**
 * The checks every route starts with, in CONTRACT.md's order, for routes served outside
 * tRPC (the task event stream): authenticate (401), rate limit (429), scope (403).
 */
export async function authorizeRawRequest(services: Services, req: IncomingMessage, res: ServerResponse, accepted: readonly Scope[]): Promise<Principal> {
  const principal = await services.authenticator.authenticate(req.headers.authorization);
  await services.rateLimiter.consume(principal.keyId, res);
  requireScope(principal, accepted);
  return principal;
}

/** Writes what a raw route threw as the CONTRACT.md error body; the unexpected is logged, not shown. */
export function sendRawError(services: Services, res: ServerResponse, requestId: string, error: unknown): void {
  const { apiError, unexpected } = toApiError(error);
  if (unexpected) services.log.error({ err: error, requestId }, 'unexpected error in a raw /v1 route');
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(apiError.status, { ...apiError.headers, 'Content-Type': 'application/json' });
  res.end(JSON.stringify(apiError.toBody(requestId)));
}
