import { z } from 'zod';
import { CONSOLE_SESSION_MS, endConsoleSession, signInOperator } from '../domain/console/console-sessions';
import { CONSOLE_COOKIE, readCookie, setCookie } from '../http/cookies';
import { consoleProcedure, operatorProcedure } from './console-procedures';

// The operator's sign-in with a console key, sign-out, and who is signed in.

/** The signed-in operator, as the console greets them. */
const SignedInOperatorSchema = z.object({ name: z.string() });

/**
 * Signs in with a console key into the sign-in cookie. A wrong key counts against the
 * address with every bearer entrance's failures (the console handler refuses the address
 * once it is over); only the token's hash is stored.
 */
export const signInProcedure = consoleProcedure
  .input(z.object({ console_key: z.string().max(200) }))
  .output(SignedInOperatorSchema)
  .mutation(async ({ ctx, input }) => {
    const { operator, token } = await ctx.services.authThrottle.check(ctx.req, () => signInOperator(ctx.services.db, input.console_key));
    setCookie(ctx.res, ctx.services.config.http.publicUrl, CONSOLE_COOKIE, token, { path: '/', maxAgeSecs: CONSOLE_SESSION_MS / 1000 });
    return { name: operator.name };
  });

/** Ends the cookie's sign-in in the database and clears the cookie; signed in or not. */
export const signOutProcedure = consoleProcedure.output(z.object({ signed_out: z.literal(true) })).mutation(async ({ ctx }) => {
  await endConsoleSession(ctx.services.db, readCookie(ctx.req, CONSOLE_COOKIE));
  setCookie(ctx.res, ctx.services.config.http.publicUrl, CONSOLE_COOKIE, '', { path: '/', maxAgeSecs: 0 });
  return { signed_out: true as const };
});

/** Who is signed in; the console's pages ask on load (401 console_sign_in_required: show the sign-in). */
export const getOperatorProcedure = operatorProcedure.output(SignedInOperatorSchema).query(({ ctx }) => ({ name: ctx.operator.name }));
