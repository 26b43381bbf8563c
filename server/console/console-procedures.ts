import type { AdminOrigin } from '../domain/orgs/operator-admin';
import { ApiError } from '../core/errors';
import { unstorableInput } from '../core/storable-text';
import { publicProcedure } from '../trpc/init';
import { CONSOLE_HEADER, resolveCaller } from '../http/resolve-caller';

/**
 * Any console call, signed in or not: the CSRF header first (403
 * console_header_required), then the input's text, refused (400 invalid_request naming
 * the field, as on /v1) where PostgreSQL could not store it, before any schema parses it.
 */
export const consoleProcedure = publicProcedure.use(async ({ ctx, getRawInput, next }) => {
  if (ctx.req.headers[CONSOLE_HEADER] !== '1') throw new ApiError('console_header_required');
  const unstorable = unstorableInput(await getRawInput());
  if (unstorable !== null) throw new ApiError('invalid_request', unstorable);
  return next();
});

/**
 * A signed-in operator's call: the sign-in cookie's operator (401
 * console_sign_in_required without a valid one), and the origin their changes are
 * audited with (`via: "console"`, the operator's name).
 */
export const operatorProcedure = consoleProcedure.use(async ({ ctx, next }) => {
  const { operator } = await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'operator', from: 'console_api' });
  const auditOrigin: AdminOrigin = { via: 'console', operator: operator.name };
  return next({ ctx: { operator, auditOrigin } });
});
