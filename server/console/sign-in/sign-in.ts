import { z } from 'zod';
import { CONSOLE_SESSION_MS, signInOperator } from '../../domain/console/console-sessions';
import { CONSOLE_COOKIE, setCookie } from '../../http/cookies';
import { consoleProcedure } from '../console-procedures';
import { SignedInOperatorSchema } from './sign-in-schemas';

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
