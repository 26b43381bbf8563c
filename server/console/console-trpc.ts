import type { IncomingMessage, ServerResponse } from 'node:http';
import { initTRPC, TRPCError } from '@trpc/server';
import { consoleOperator } from '../domain/console/console-sessions';
import type { Operator } from '../domain/console/operator-accounts';
import type { Services } from '../services';

/** Cookie holding the console sign-in token (HttpOnly, SameSite=Strict). */
export const CONSOLE_COOKIE = 'svc_console';
/**
 * Every console call carries this header. A page on another site can make a browser send
 * the cookie (a form post, an image), but not a custom header without a CORS preflight,
 * which this server never grants: that is the console's CSRF defence, with SameSite.
 */
export const CONSOLE_HEADER = 'x-svc-console';

export interface ConsoleContext {
  req: IncomingMessage;
  res: ServerResponse;
  services: Services;
  /** The cookie's token, when one was sent. */
  token: string | null;
}

export function readConsoleCookie(req: IncomingMessage): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CONSOLE_COOKIE) return value.join('=') || null;
  }
  return null;
}

const t = initTRPC.context<ConsoleContext>().create({
  // Messages are the console's own sentences; nothing else (stack, cause) leaves.
  errorFormatter: ({ shape, error }) => ({
    message: error.code === 'INTERNAL_SERVER_ERROR' ? 'An internal error occurred.' : shape.message,
    code: shape.code,
    data: { code: shape.data.code },
  }),
});

export const consoleRouter = t.router;

/** Any console call: the CSRF header first. */
export const consoleProcedure = t.procedure.use(({ ctx, next }) => {
  if (ctx.req.headers[CONSOLE_HEADER] !== '1') throw new TRPCError({ code: 'FORBIDDEN', message: 'Console calls must come from the console.' });
  return next();
});

/** A signed-in operator's call. */
export const operatorProcedure = consoleProcedure.use(async ({ ctx, next }) => {
  const operator: Operator | null = ctx.token === null ? null : await consoleOperator(ctx.services.db, ctx.token);
  if (operator === null) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in with your console key.' });
  return next({ ctx: { operator } });
});
