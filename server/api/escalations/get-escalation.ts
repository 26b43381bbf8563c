import { z } from 'zod';
import { EscalationSchema } from '../../domain/escalations/escalation-resource';
import { getEscalation } from '../../domain/escalations/list-escalations';
import { scoped } from '../../trpc/procedures';

export const getEscalationProcedure = scoped('operator:escalations:read')
  .meta({ openapi: { method: 'GET', path: '/escalations/{id}', tags: ['escalations'], summary: 'Get an escalation' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(EscalationSchema)
  .query(({ ctx, input }) => getEscalation(ctx.services.db, ctx.principal, input.id));
