import { z } from 'zod';
import { endLiveSession } from '../../domain/sessions/live-view-sessions';
import { liveViewProcedure } from './live-view-procedure';

/** Ends a session a page minted (the page closed): revoked, a hold dropped and its task resumed. */
export const endSessionProcedure = liveViewProcedure
  .input(z.object({ session_id: z.string().max(200) }))
  .output(z.object({ ended: z.literal(true) }))
  .mutation(async ({ ctx, input }) => {
    await endLiveSession(ctx.services, ctx.liveViewCaller, ctx.requestId, input.session_id);
    return { ended: true as const };
  });
