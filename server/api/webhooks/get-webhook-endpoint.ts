import { z } from 'zod';
import { WebhookEndpointSchema } from '../../domain/webhooks/endpoint-resource';
import { getWebhookEndpoint } from '../../domain/webhooks/endpoints';
import { scoped } from '../../trpc/procedures';

export const getWebhookEndpointProcedure = scoped('operator:webhooks:read')
  .meta({ openapi: { method: 'GET', path: '/webhook_endpoints/{id}', tags: ['webhooks'], summary: 'Get a webhook endpoint' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(WebhookEndpointSchema)
  .query(({ ctx, input }) => getWebhookEndpoint(ctx.services.db, ctx.principal, input.id));
