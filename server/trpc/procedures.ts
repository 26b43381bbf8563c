import { ApiError } from '../errors';
import { requireScope } from '../http/authorize';
import type { Scope } from '../domain/keys/scopes';
import { publicProcedure, t } from './init';

// Checks run in the order CONTRACT.md fixes for every route: authenticate (401), rate
// limit (429), scope (403), entitlement on writes (403), then the route itself, which
// starts with reading the body.

const authenticate = t.middleware(async ({ ctx, next }) => {
  const principal = await ctx.services.authenticator.authenticate(ctx.req.headers.authorization);
  return next({ ctx: { principal } });
});

const authenticatedProcedure = publicProcedure.use(authenticate).use(async ({ ctx, next }) => {
  await ctx.services.rateLimiter.consume(ctx.principal.keyId, ctx.res);
  return next();
});

const rejectUnreadableBody = t.middleware(({ ctx, next }) => {
  if (ctx.bodyError !== null) throw ctx.bodyError;
  return next();
});

function requireAnyScope(accepted: readonly Scope[]) {
  return authenticatedProcedure.use(({ ctx, next }) => {
    requireScope(ctx.principal, accepted);
    return next();
  });
}

/** Any valid key, no scope (whoami, the event-type catalogue). */
export const authedProcedure = authenticatedProcedure.use(rejectUnreadableBody);

/** Needs one of the given scopes (more than one only for legacy aliases, e.g. audit). */
export function scoped(...accepted: [Scope, ...Scope[]]) {
  return requireAnyScope(accepted).use(rejectUnreadableBody);
}

/** The write gate: the scope, then the organization's product entitlement. */
export function writeGated(scope: Scope) {
  return requireAnyScope([scope])
    .use(({ ctx, next }) => {
      if (!ctx.principal.entitled) throw new ApiError('product_not_entitled');
      return next();
    })
    .use(rejectUnreadableBody);
}
