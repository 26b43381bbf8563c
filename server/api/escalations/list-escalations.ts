import { z } from 'zod';
import { EscalationSchema } from '../../domain/escalations/escalation-resource';
import { listEscalations, ListEscalationsQuerySchema } from '../../domain/escalations/list-escalations';
import { scoped } from '../../trpc/procedures';

export const listEscalationsProcedure = scoped('operator:escalations:read')
  .meta({ openapi: { method: 'GET', path: '/escalations', tags: ['escalations'], summary: 'List escalations, newest first' } })
  .input(ListEscalationsQuerySchema)
  .output(z.object({ data: z.array(EscalationSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listEscalations(ctx.services.db, ctx.services.cursors, ctx.principal, input));
