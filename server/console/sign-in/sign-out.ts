import { z } from 'zod';
import { endConsoleSession } from '../../domain/console/console-sessions';
import { CONSOLE_COOKIE, readCookie, setCookie } from '../../http/cookies';
import { consoleProcedure } from '../console-procedures';

/** Ends the cookie's sign-in in the database and clears the cookie; signed in or not. */
export const signOutProcedure = consoleProcedure.output(z.object({ signed_out: z.literal(true) })).mutation(async ({ ctx }) => {
  await endConsoleSession(ctx.services.db, readCookie(ctx.req, CONSOLE_COOKIE));
  setCookie(ctx.res, ctx.services.config.http.publicUrl, CONSOLE_COOKIE, '', { path: '/', maxAgeSecs: 0 });
  return { signed_out: true as const };
});
