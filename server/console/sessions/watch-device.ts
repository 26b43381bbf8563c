import { z } from 'zod';
import { MintedSessionSchema } from '../../domain/sessions/session-resource';
import { watchDevice } from '../../domain/sessions/live-view-sessions';
import { liveViewProcedure } from './live-view-procedure';

/** A watch session of a device for a page's live view, minted under /v1's rules and audited with its caller. */
export const watchDeviceProcedure = liveViewProcedure
  .input(z.object({ device_id: z.string().max(200) }))
  .output(MintedSessionSchema)
  .mutation(({ ctx, input }) => watchDevice(ctx.services, ctx.liveViewCaller, ctx.requestId, input.device_id));
