import { actorOf } from '../../domain/keys/principal';
import { WebhookEndpointSchema } from '../../domain/webhooks/endpoint-resource';
import { updateWebhookEndpoint, UpdateWebhookEndpointInputSchema } from '../../domain/webhooks/endpoints';
import { writeGated } from '../../trpc/procedures';

export const updateWebhookEndpointProcedure = writeGated('operator:webhooks:write')
  .meta({ openapi: { method: 'PATCH', path: '/webhook_endpoints/{id}', tags: ['webhooks'], summary: 'Update a webhook endpoint; enabled: true clears the failure streak' } })
  .input(UpdateWebhookEndpointInputSchema)
  .output(WebhookEndpointSchema)
  .mutation(({ ctx, input }) => updateWebhookEndpoint(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));
