import { z } from 'zod';
import { takeOver, TakeoverBodySchema, TakeoverResultSchema } from '../../domain/sessions/session-operations';
import { writeGated } from '../../trpc/procedures';

export const takeOverProcedure = writeGated('operator:sessions:control')
  .meta({ openapi: { method: 'POST', path: '/sessions/{id}/takeover', tags: ['sessions'], summary: 'Pause the agent so a human can drive through this control session' } })
  .input(TakeoverBodySchema.extend({ id: z.string().max(200) }))
  .output(TakeoverResultSchema)
  .mutation(({ ctx, input: { id, ...body } }) => takeOver(ctx.services, ctx.principal, ctx.requestId, id, body));
