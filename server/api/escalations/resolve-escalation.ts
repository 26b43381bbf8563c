import { z } from 'zod';
import { resolveEscalation, ResolveEscalationBodySchema, ResolveEscalationResultSchema } from '../../domain/escalations/resolve-escalation';
import { escalationBearerProcedure } from '../../trpc/procedures';

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
