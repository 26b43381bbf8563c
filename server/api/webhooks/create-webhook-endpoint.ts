import { actorOf } from '../../domain/keys/principal';
import { CreatedWebhookEndpointSchema } from '../../domain/webhooks/endpoint-resource';
import { createWebhookEndpoint, CreateWebhookEndpointBodySchema } from '../../domain/webhooks/endpoints';
import { writeGated } from '../../trpc/procedures';

export const createWebhookEndpointProcedure = writeGated('operator:webhooks:write')
  .meta({ openapi: { method: 'POST', path: '/webhook_endpoints', tags: ['webhooks'], summary: 'Create a webhook endpoint; the response carries its secret once' }, successStatus: 201 })
  .input(CreateWebhookEndpointBodySchema)
  .output(CreatedWebhookEndpointSchema)
  .mutation(({ ctx, input }) => createWebhookEndpoint(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));
