import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { apiErrorCodes } from '../core/errors';
import type { Meta } from '../trpc/init';
import { appRouter } from './router';
import { escalationDeliveryWebhook } from './escalation-delivery-openapi';
import { artifactOpenApiPaths } from './artifacts-openapi';
import { taskEventsOpenApiPath } from './task-events-openapi';

type SchemaObject = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>[string];

const ERROR_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id'],
      properties: {
        code: { type: 'string', enum: apiErrorCodes },
        message: { type: 'string' },
        request_id: { type: 'string', pattern: '^req_' },
        param: { type: 'string' },
      },
    },
  },
};

type Operation = { responses?: Record<string, unknown> };

/**
 * The OpenAPI 3.1 document of /v1, generated from the procedures' meta and zod schemas.
 * trpc-to-openapi documents every success as 200 and errors in its own shape, so the
 * success status of each route and the CONTRACT.md error body are written in afterwards.
 */
export function buildOpenApiDocument(publicUrl: string) {
  const document = generateOpenApiDocument(appRouter, {
    title: 'Browser Device Operator Service',
    description: 'Run natural-language browser tasks on cloud browser devices.',
    version: '0.1.0',
    baseUrl: `${publicUrl}/v1`,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'svc_operator_<env>_<key_id>_<secret>' } },
  });
  document.components = { ...document.components, schemas: { ...document.components?.schemas, Error: ERROR_BODY_SCHEMA } };

  const procedures = appRouter._def.procedures as Record<string, { _def: { meta?: Meta } }>;
  for (const procedure of Object.values(procedures)) {
    const meta = procedure._def.meta;
    if (meta?.openapi === undefined) continue;
    const path = meta.openapi.path.replace(/\/+$/, '');
    const operation = (document.paths?.[path] as Record<string, Operation> | undefined)?.[meta.openapi.method.toLowerCase()];
    if (operation?.responses === undefined) continue;
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(operation.responses)) {
      if (status === '200' && meta.successStatus !== undefined) {
        responses[String(meta.successStatus)] = meta.successStatus === 204 ? { description: 'No content' } : response;
      } else if (status === '200') {
        responses[status] = response;
      }
    }
    responses.default = {
      description: 'Error (CONTRACT.md body)',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
    operation.responses = responses;
  }
  document.paths = { ...document.paths, '/tasks/{id}/events': taskEventsOpenApiPath, ...artifactOpenApiPaths } as typeof document.paths;
  declareEscalationBearer(document);
  (document as { webhooks?: Record<string, unknown> }).webhooks = { escalationDelivery: escalationDeliveryWebhook };
  return document;
}

/** The resolve callback is authenticated by its escalation's bearer, not by an API key. */
function declareEscalationBearer(document: OpenAPIObject): void {
  document.components!.securitySchemes = {
    ...document.components!.securitySchemes,
    escalationBearer: { type: 'http', scheme: 'bearer', description: 'The per-escalation token POSTed to the escalation URL (esctok_...)' },
  };
  const resolve = (document.paths?.['/escalations/{id}/resolve'] as Record<string, { security?: unknown }> | undefined)?.post;
  if (resolve !== undefined) resolve.security = [{ escalationBearer: [] }];
}
