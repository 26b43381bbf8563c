import type { IncomingMessage, ServerResponse } from 'node:http';
import { initTRPC, TRPCError } from '@trpc/server';
import { consoleOperator } from '../domain/console/console-sessions';
import type { Operator } from '../domain/console/operator-accounts';
import type { Services } from '../services';
import { unstorableInput } from '../storable-text';

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

/** Input holding text PostgreSQL cannot store; `param` names the field, as on /v1. */
class UnstorableInputError extends Error {
  constructor(readonly param: string) {
    super(`unstorable text in ${param}`);
  }
}

const t = initTRPC.context<ConsoleContext>().create({
  // Messages are the console's own sentences; nothing else (stack, cause) leaves.
  errorFormatter: ({ shape, error }) => ({
    message: error.code === 'INTERNAL_SERVER_ERROR' ? 'An internal error occurred.' : shape.message,
    code: shape.code,
    data: { code: shape.data.code, ...(error.cause instanceof UnstorableInputError ? { param: error.cause.param } : {}) },
  }),
});

export const consoleRouter = t.router;

/**
 * Any console call: the CSRF header first, then the input's text, refused (400) where
 * PostgreSQL could not store it, before any procedure parses it.
 */
export const consoleProcedure = t.procedure.use(async ({ ctx, getRawInput, next }) => {
  if (ctx.req.headers[CONSOLE_HEADER] !== '1') throw new TRPCError({ code: 'FORBIDDEN', message: 'Console calls must come from the console.' });
  const unstorable = unstorableInput(await getRawInput());
  if (unstorable !== null) throw new TRPCError({ code: 'BAD_REQUEST', message: unstorable.message, cause: new UnstorableInputError(unstorable.param) });
  return next();
});

/** A signed-in operator's call. */
export const operatorProcedure = consoleProcedure.use(async ({ ctx, next }) => {
  const operator: Operator | null = ctx.token === null ? null : await consoleOperator(ctx.services.db, ctx.token);
  if (operator === null) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in with your console key.' });
  return next({ ctx: { operator } });
});
