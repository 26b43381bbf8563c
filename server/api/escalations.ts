import { z } from 'zod';
import { EscalationSchema } from '../domain/escalations/escalation-resource';
import { getEscalation, listEscalations, ListEscalationsQuerySchema } from '../domain/escalations/list-escalations';
import { resolveEscalation, ResolveEscalationBodySchema, ResolveEscalationResultSchema } from '../domain/escalations/resolve-escalation';
import { escalationBearerProcedure, scoped } from '../trpc/procedures';

// /v1/escalations: list, get, and the escalation destination's resolve callback.

export const listEscalationsProcedure = scoped('operator:escalations:read')
  .meta({ openapi: { method: 'GET', path: '/escalations', tags: ['escalations'], summary: 'List escalations, newest first' } })
  .input(ListEscalationsQuerySchema)
  .output(z.object({ data: z.array(EscalationSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listEscalations(ctx.services.db, ctx.services.cursors, ctx.principal, input));

export const getEscalationProcedure = scoped('operator:escalations:read')
  .meta({ openapi: { method: 'GET', path: '/escalations/{id}', tags: ['escalations'], summary: 'Get an escalation' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(EscalationSchema)
  .query(({ ctx, input }) => getEscalation(ctx.services.db, ctx.principal, input.id));

export const resolveEscalationProcedure = escalationBearerProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/escalations/{id}/resolve',
      tags: ['escalations'],
      summary: 'Resolve an escalation (callback of the escalation destination)',
      description:
        'Called by the escalation destination with the per-escalation bearer it received (`Authorization: Bearer <token>`), never with an API key. Resolving twice answers `applied: false`.',
      // Not an API-key route: the escalation bearer is declared in openapi.ts.
      protect: false,
    },
  })
  .input(ResolveEscalationBodySchema.extend({ id: z.string().max(200) }))
  .output(ResolveEscalationResultSchema)
  .mutation(({ ctx, input: { id: _id, ...body } }) => resolveEscalation(ctx.services, ctx.escalation, body, { requestId: ctx.requestId, via: 'resolve_callback' }));
