import { z } from 'zod';
import { LiveTakeoverSchema, takeOverDevice } from '../../domain/sessions/live-view-sessions';
import { liveViewProcedure } from './live-view-procedure';

/** Takes a device over from a page: a control session and its takeover hold, under /v1's rules. */
export const takeOverDeviceProcedure = liveViewProcedure
  .input(z.object({ device_id: z.string().max(200), reason: z.string().max(1000).optional() }))
  .output(LiveTakeoverSchema)
  .mutation(({ ctx, input }) => takeOverDevice(ctx.services, ctx.liveViewCaller, ctx.requestId, input.device_id, input.reason));
