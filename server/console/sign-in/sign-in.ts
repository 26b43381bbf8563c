import { CONSOLE_SESSION_MS, signInOperator } from '../../domain/console/console-sessions';
import { setConsoleCookie } from '../../http/console-cookie';
import { consoleProcedure } from '../console-procedures';
import { SignedInOperatorSchema, SignInInputSchema } from './sign-in-schemas';

/**
 * Signs in with a console key into the sign-in cookie. A wrong key counts against the
 * address with every bearer entrance's failures (the console handler refuses the address
 * once it is over); only the token's hash is stored.
 */
export const signInProcedure = consoleProcedure
  .input(SignInInputSchema)
  .output(SignedInOperatorSchema)
  .mutation(async ({ ctx, input }) => {
    const { operator, token } = await ctx.services.authThrottle.check(ctx.req, () => signInOperator(ctx.services.db, input.console_key));
    setConsoleCookie(ctx.res, ctx.services.config.http.publicUrl, token, CONSOLE_SESSION_MS / 1000);
    return { name: operator.name };
  });
