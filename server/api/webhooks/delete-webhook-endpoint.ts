import { z } from 'zod';
import { actorOf } from '../../domain/keys/principal';
import { deleteWebhookEndpoint } from '../../domain/webhooks/endpoints';
import { writeGated } from '../../trpc/procedures';

export const deleteWebhookEndpointProcedure = writeGated('operator:webhooks:write')
  .meta({ openapi: { method: 'DELETE', path: '/webhook_endpoints/{id}', tags: ['webhooks'], summary: 'Delete a webhook endpoint' }, successStatus: 204 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => deleteWebhookEndpoint(ctx.services.db, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
