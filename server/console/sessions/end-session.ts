import { z } from 'zod';
import { endSessionAsOperator } from '../../domain/console/operator-live';
import { operatorProcedure } from '../console-procedures';

/** Ends a session the console minted (its page closed): revoked, a hold dropped and its task resumed. */
export const endSessionProcedure = operatorProcedure
  .input(z.object({ session_id: z.string().max(200) }))
  .output(z.object({ ended: z.literal(true) }))
  .mutation(async ({ ctx, input }) => {
    await endSessionAsOperator(ctx.services, ctx.operator, ctx.requestId, input.session_id);
    return { ended: true as const };
  });
