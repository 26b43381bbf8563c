import { endConsoleSession } from '../../domain/console/console-sessions';
import { readConsoleCookie, setConsoleCookie } from '../../http/console-cookie';
import { consoleProcedure } from '../console-procedures';
import { SignedOutSchema } from './sign-in-schemas';

/** Ends the cookie's sign-in in the database and clears the cookie; signed in or not. */
export const signOutProcedure = consoleProcedure.output(SignedOutSchema).mutation(async ({ ctx }) => {
  await endConsoleSession(ctx.services.db, readConsoleCookie(ctx.req));
  setConsoleCookie(ctx.res, ctx.services.config.http.publicUrl, '', 0);
  return { signed_out: true as const };
});
