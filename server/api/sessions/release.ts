import { z } from 'zod';
import { release, ReleaseResultSchema } from '../../domain/sessions/session-operations';
import { writeGated } from '../../trpc/procedures';

export const releaseProcedure = writeGated('operator:sessions:control')
  .meta({ openapi: { method: 'POST', path: '/sessions/{id}/release', tags: ['sessions'], summary: 'Drop the takeover hold and resume the task' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(ReleaseResultSchema)
  .mutation(({ ctx, input }) => release(ctx.services, ctx.principal, ctx.requestId, input.id));
