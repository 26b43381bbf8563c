import { z } from 'zod';
import { WebhookEndpointSchema } from '../../domain/webhooks/endpoint-resource';
import { listWebhookEndpoints, ListWebhookEndpointsQuerySchema } from '../../domain/webhooks/endpoints';
import { scoped } from '../../trpc/procedures';

export const listWebhookEndpointsProcedure = scoped('operator:webhooks:read')
  .meta({ openapi: { method: 'GET', path: '/webhook_endpoints', tags: ['webhooks'], summary: 'List webhook endpoints, newest first' } })
  .input(ListWebhookEndpointsQuerySchema)
  .output(z.object({ data: z.array(WebhookEndpointSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listWebhookEndpoints(ctx.services.db, ctx.services.cursors, ctx.principal, input));
