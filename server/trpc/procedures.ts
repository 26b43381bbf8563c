import { z } from 'zod';
import { ApiError, type ApiErrorCode } from '../core/errors';
import type { Db } from '../../db/client';
import type { Principal } from '../domain/keys/principal';
import type { Scope } from '../domain/keys/scopes';
import { resolveCaller, type CallerRule } from '../http/resolve-caller';
import { publicProcedure, t } from './init';

type KeyRule = Extract<CallerRule, { kind: 'api_key' }>;

/**
 * Every check before a route, in the order CONTRACT.md fixes: authenticate (401), rate
 * limit (429), scope (403), entitlement on writes (403), then the body the v1 handler
 * could not read (400/413/415). Called from the console, the caller is the signed-in
 * operator acting on the organization the call names, with every scope (no rate limit).
 * One middleware rather than a chain: each tRPC middleware costs a context copy on every
 * request, and this is the hottest path of the API.
 */
function keyed(rule: KeyRule) {
  const guard = t.middleware(async ({ ctx, next }) => {
    const { principal } =
      ctx.viaConsole === true
        ? await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'operator', from: 'console_api' })
        : await resolveCaller(ctx.services, ctx.req, ctx.res, rule, { authenticated: ctx.authenticated });
    if (principal === null) throw new ApiError('invalid_request', { message: 'An operator names the organization a /v1 operation acts on in the x-svc-org header.' });
    if (ctx.bodyError !== null) throw ctx.bodyError;
    return next({ ctx: { principal } });
  });
  return publicProcedure.use(guard).meta({ caller: rule });
}

/** Any valid key, no scope (whoami, the event-type catalogue). */
export const authedProcedure = keyed({ kind: 'api_key', scopes: null });

/** Needs one of the given scopes (more than one only for legacy aliases, e.g. audit). */
export function scoped(...accepted: [Scope, ...Scope[]]) {
  return keyed({ kind: 'api_key', scopes: accepted });
}

/** The write gate: the scope, then the organization's product entitlement. */
export function writeGated(scope: Scope) {
  return keyed({ kind: 'api_key', scopes: [scope], write: true });
}

const PathIdSchema = z.object({ id: z.string() });

/**
 * The write gate, then the `{id}` resource loaded for the caller (`notFound`, or 403 for a
 * Space the key lacks) before the body is validated: the spec orders the resource check
 * right after the write gate, so another organization's id answers 404 whatever the body
 * holds. tRPC parses the input where `.input()` is chained, after this middleware. What
 * was loaded goes on in the context (`ctx.resource`), so the route does not load it again.
 */
export function writeGatedOn<T>(scope: Scope, notFound: ApiErrorCode, load: (db: Db, principal: Principal, publicId: string) => Promise<T>) {
  return writeGated(scope).use(async ({ ctx, getRawInput, next }) => {
    const raw = PathIdSchema.safeParse(await getRawInput());
    if (!raw.success) throw new ApiError(notFound);
    return next({ ctx: { resource: await load(ctx.services.db, ctx.principal, raw.data.id) } });
  });
}

/**
 * The escalation resolve callback: no API key, the per-escalation bearer instead (401
 * invalid_escalation_token, throttled per address like keys), checked before the body as
 * a key is on other routes. The escalation it opens is handed to the resolver.
 */
export const escalationBearerProcedure = publicProcedure.meta({ caller: { kind: 'escalation_bearer' } }).use(async ({ ctx, getRawInput, next }) => {
  const raw = (await getRawInput()) as { id?: unknown };
  const id = typeof raw.id === 'string' ? raw.id : '';
  const { escalation } = await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'escalation_bearer' }, { subject: id });
  if (ctx.bodyError !== null) throw ctx.bodyError;
  return next({ ctx: { escalation } });
});
