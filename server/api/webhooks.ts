import { z } from 'zod';
import { actorOf } from '../domain/keys/principal';
import { CreatedWebhookEndpointSchema, WebhookEndpointSchema } from '../domain/webhooks/endpoint-resource';
import { createWebhookEndpoint, CreateWebhookEndpointBodySchema, deleteWebhookEndpoint, getWebhookEndpoint, listWebhookEndpoints, ListWebhookEndpointsQuerySchema, updateWebhookEndpoint, UpdateWebhookEndpointInputSchema } from '../domain/webhooks/endpoints';
import { EventTypeListSchema, listEventTypes } from '../domain/webhooks/event-types';
import { authedProcedure, scoped, writeGated } from '../trpc/procedures';

// /v1/webhook_endpoints and the event types they may subscribe to.

export const listEventTypesProcedure = authedProcedure
  .meta({ openapi: { method: 'GET', path: '/event_types', tags: ['webhooks'], summary: 'List the event type catalogue' } })
  .input(z.strictObject({}))
  .output(EventTypeListSchema)
  .query(() => listEventTypes());

export const createWebhookEndpointProcedure = writeGated('operator:webhooks:write')
  .meta({ openapi: { method: 'POST', path: '/webhook_endpoints', tags: ['webhooks'], summary: 'Create a webhook endpoint; the response carries its secret once' }, successStatus: 201 })
  .input(CreateWebhookEndpointBodySchema)
  .output(CreatedWebhookEndpointSchema)
  .mutation(({ ctx, input }) => createWebhookEndpoint(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));

export const listWebhookEndpointsProcedure = scoped('operator:webhooks:read')
  .meta({ openapi: { method: 'GET', path: '/webhook_endpoints', tags: ['webhooks'], summary: 'List webhook endpoints, newest first' } })
  .input(ListWebhookEndpointsQuerySchema)
  .output(z.object({ data: z.array(WebhookEndpointSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listWebhookEndpoints(ctx.services.db, ctx.services.cursors, ctx.principal, input));

export const getWebhookEndpointProcedure = scoped('operator:webhooks:read')
  .meta({ openapi: { method: 'GET', path: '/webhook_endpoints/{id}', tags: ['webhooks'], summary: 'Get a webhook endpoint' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(WebhookEndpointSchema)
  .query(({ ctx, input }) => getWebhookEndpoint(ctx.services.db, ctx.principal, input.id));

export const updateWebhookEndpointProcedure = writeGated('operator:webhooks:write')
  .meta({ openapi: { method: 'PATCH', path: '/webhook_endpoints/{id}', tags: ['webhooks'], summary: 'Update a webhook endpoint; enabled: true clears the failure streak' } })
  .input(UpdateWebhookEndpointInputSchema)
  .output(WebhookEndpointSchema)
  .mutation(({ ctx, input }) => updateWebhookEndpoint(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input));

export const deleteWebhookEndpointProcedure = writeGated('operator:webhooks:write')
  .meta({ openapi: { method: 'DELETE', path: '/webhook_endpoints/{id}', tags: ['webhooks'], summary: 'Delete a webhook endpoint' }, successStatus: 204 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => deleteWebhookEndpoint(ctx.services.db, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
