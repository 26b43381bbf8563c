import { z } from 'zod';
import { releaseTakeover } from '../../domain/sessions/live-view-sessions';
import { ReleaseResultSchema } from '../../domain/sessions/session-operations';
import { liveViewProcedure } from './live-view-procedure';

/** Releases a page's takeover; the task resumes (POST /v1/sessions/{id}/release's rules). */
export const releaseTakeoverProcedure = liveViewProcedure
  .input(z.object({ session_id: z.string().max(200) }))
  .output(ReleaseResultSchema)
  .mutation(({ ctx, input }) => releaseTakeover(ctx.services, ctx.liveViewCaller, ctx.requestId, input.session_id));
