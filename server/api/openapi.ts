import { z } from 'zod';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { ApiError, apiErrorCodes, type ApiErrorCode } from '../core/errors';
import type { Meta } from '../trpc/init';
import type { CallerRule } from '../http/resolve-caller';
import { nameSchema, namedResourceSchemas, streamedSchemas } from './openapi-components';
import { routeErrors } from './openapi-route-errors';
import { appRouter, rawEntryPoints } from './router';
import type { RawEntryPoint, RawOperation } from './entry-point';
import { isZodJsonSchema, jsonValueComponents } from './json-value-openapi';
import { webhooksOpenApi, webhookComponents } from './webhooks-openapi';

type SchemaObject = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>[string];

const ERROR_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'The body of every 4xx and 5xx answer (CONTRACT.md).',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id'],
      properties: {
        code: { type: 'string', enum: apiErrorCodes },
        message: { type: 'string', description: 'One sentence; never echoes secrets or input.' },
        request_id: { type: 'string', pattern: '^req_' },
        param: { type: 'string', description: 'The offending input field, on input errors.' },
      },
    },
  },
};

const HEADERS: NonNullable<NonNullable<OpenAPIObject['components']>['headers']> = {
  'X-Request-Id': { description: 'The request id (`req_<uuid>`), also in error bodies.', schema: { type: 'string', pattern: '^req_' } },
  'RateLimit-Limit': { description: "The key's burst: requests it may make at once.", schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current budget.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the budget is full again.', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
};

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Up to 255 characters. A retry with the same key and body answers the first response again without repeating the work; ' +
    'the same key with a different body is 409 `idempotency_conflict`. Scoped per organization and route.',
  schema: { type: 'string', maxLength: 255 },
};

type Operation = {
  operationId?: string;
  parameters?: unknown[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, { description?: string; headers?: unknown; content?: Record<string, { schema?: Record<string, unknown> }> }>;
};
type Procedure = { _def: { meta?: Meta } };

/** `/devices/{id}/sleep` → the not-found code of its resource (`device_not_found`), if there is one. */
function notFoundCodeOf(path: string): ApiErrorCode | undefined {
  const match = /^\/([a-z_]+)\/\{/.exec(path);
  if (match === null) return undefined;
  const singular = match[1]!.replace(/ies$/, 'y').replace(/s$/, '');
  const code = `${singular}_not_found`;
  return (apiErrorCodes as readonly string[]).includes(code) ? (code as ApiErrorCode) : undefined;
}

/** What a caller rule's checks answer: its 401, the 429 of the throttle (and a key's rate limit), a key's 403s. */
function callerErrorCodes(rule: CallerRule | undefined): ApiErrorCode[] {
  if (rule?.kind === 'escalation_bearer') return ['invalid_escalation_token', 'rate_limited'];
  if (rule?.kind !== 'api_key') return [];
  return ['invalid_api_key', 'rate_limited', ...(rule.scopes === null ? [] : (['insufficient_scope'] as const)), ...(rule.write === true ? (['product_not_entitled'] as const) : [])];
}

/**
 * Every error code a route can answer, from what it is: its caller rule (the guard's
 * checks), its inputs, its path and the domain errors listed in openapi-route-errors.ts.
 */
export function errorCodesOf(name: string, meta: Meta, operation: Operation): ApiErrorCode[] {
  const method = meta.openapi!.method;
  const codes = new Set<ApiErrorCode>();
  const hasInput = (operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined;
  if (hasInput) codes.add('invalid_request');
  if (operation.parameters?.some((parameter) => (parameter as { name?: string }).name === 'cursor')) codes.add('invalid_cursor');
  for (const code of callerErrorCodes(meta.caller)) codes.add(code);
  // An escalation bearer names its escalation: an unknown id is its 401, never a 404.
  const notFound = meta.caller?.kind === 'escalation_bearer' ? undefined : notFoundCodeOf(meta.openapi!.path);
  if (notFound !== undefined) codes.add(notFound);
  if (method === 'POST' || method === 'PATCH' || method === 'PUT') {
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
  }
  for (const code of routeErrors[name] ?? []) codes.add(code);
  codes.add('internal_error');
  // Every route reads the database, at least to authenticate.
  codes.add('service_unavailable');
  return [...codes];
}

const errorStatusOf = (code: ApiErrorCode): number => new ApiError(code).status;
const errorMessageOf = (code: ApiErrorCode): string => new ApiError(code).message;

const json = (ref: string) => ({ 'application/json': { schema: { $ref: ref } } });

/** One response per status; its description lists the codes it can carry. */
export function errorResponses(codes: readonly ApiErrorCode[], withRateLimitHeaders: boolean): Record<string, unknown> {
  const byStatus = new Map<number, ApiErrorCode[]>();
  for (const code of codes) byStatus.set(errorStatusOf(code), [...(byStatus.get(errorStatusOf(code)) ?? []), code]);
  const responses: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
    // Rate limiting comes after authentication: a 401 has no budget to report.
    if (withRateLimitHeaders && status !== 401) Object.assign(headers, rateLimitHeaderRefs());
    if (status === 429 || status === 503) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    responses[String(status)] = {
      description: list.map((code) => `\`${code}\`: ${errorMessageOf(code)}`).join(' '),
      headers,
      content: json('#/components/schemas/Error'),
    };
  }
  return responses;
}

function rateLimitHeaderRefs(): Record<string, unknown> {
  return Object.fromEntries(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * Moves an inline JSON schema of an operation into components under a derived name: a
 * page of `X` becomes `XList`, other bodies `<OperationId>Request` / `<OperationId>Response`.
 */
function nameInline(document: OpenAPIObject, holder: { schema?: Record<string, unknown> } | undefined, fallback: string): void {
  const schema = holder?.schema;
  if (schema === undefined || '$ref' in schema || Object.keys(schema).length === 0) return;
  const properties = schema.properties as Record<string, { items?: { $ref?: string } }> | undefined;
  const itemRef = properties?.data?.items?.$ref;
  const name = itemRef !== undefined && properties?.next_cursor !== undefined ? `${itemRef.split('/').at(-1)}List` : fallback;
  const schemas = (document.components!.schemas ??= {});
  if (schemas[name] === undefined) schemas[name] = schema as SchemaObject;
  holder!.schema = { $ref: `#/components/schemas/${name}` };
}

/**
 * zod-openapi names unnamed recursive schemas `__schemaN`, one copy per use: here each is
 * a `z.json()` (a result, an answer, an output schema's member). Every copy becomes a
 * reference to `JsonValue`, written in the form generators accept (json-value-openapi.ts).
 * Any other recursive schema would need the same care, so it stops the build.
 */
function nameJsonValues(document: OpenAPIObject): OpenAPIObject {
  const schemas = document.components?.schemas ?? {};
  const anonymous = Object.keys(schemas).filter((name) => name.startsWith('__schema'));
  if (anonymous.length === 0) return document;
  let text = JSON.stringify(document);
  for (const name of anonymous) {
    if (!isZodJsonSchema(schemas[name], name)) throw new Error(`The recursive schema ${name} is not z.json(): give it a name and a form openapi-typescript can render.`);
    text = text.replaceAll(`"#/components/schemas/${name}"`, '"#/components/schemas/JsonValue"');
  }
  const named = JSON.parse(text) as OpenAPIObject;
  for (const name of anonymous) delete named.components!.schemas![name];
  Object.assign(named.components!.schemas!, jsonValueComponents);
  return named;
}

const RANGE_HEADER = {
  name: 'Range',
  in: 'header',
  required: false,
  description: 'One byte range, `bytes=<first>-[<last>]` or `bytes=-<suffix length>`; past the end: 416 range_not_satisfiable. Several ranges are answered whole (200).',
  schema: { type: 'string' },
};

/** A raw route's operation, from its declaration: what it says of itself, and what its caller rule and its kind of answer imply. */
function rawOperationOf(entry: RawEntryPoint, { operationId, summary, description, tags, parameters, response, errors }: RawOperation): Record<string, unknown> {
  const keyed = entry.caller.kind === 'api_key';
  const codes: ApiErrorCode[] = [...callerErrorCodes(entry.caller), ...(response.kind === 'bytes' ? (['range_not_satisfiable'] as const) : []), ...errors, 'internal_error', 'service_unavailable'];
  const success =
    response.kind === 'bytes'
      ? {
          '200': { description: `${response.what}, whole. Accept-Ranges: bytes.`, content: { [response.contentType]: { schema: { type: 'string', format: 'binary' } } } },
          '206': { description: `One range of ${response.what}, with Content-Range.`, content: { [response.contentType]: { schema: { type: 'string', format: 'binary' } } } },
        }
      : {
          // What is on the wire: text. Each frame's parsed form is named in components
          // (OpenAPI 3.2's itemSchema would say so; 3.1 has no place for it).
          '200': { description: response.description, headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } }, content: { 'text/event-stream': { schema: { type: 'string' }, example: response.example } } },
        };
  return {
    operationId,
    summary,
    ...(description === undefined ? {} : { description }),
    tags,
    security: keyed ? [{ bearerAuth: [] }] : [],
    parameters: response.kind === 'bytes' ? [...parameters, RANGE_HEADER] : parameters,
    responses: { ...success, ...errorResponses(codes, keyed) },
  };
}

/**
 * The OpenAPI 3.1 document of /v1, generated from the procedures' meta and zod schemas.
 * trpc-to-openapi documents every success as 200 and errors in its own shape, so the
 * success status, headers, named bodies and the CONTRACT.md errors of each route are
 * written in afterwards, from the same meta; the raw routes from their declarations, and
 * the webhooks from their module.
 */
export function buildOpenApiDocument(publicUrl: string): OpenAPIObject {
  for (const [name, schema] of Object.entries(namedResourceSchemas)) nameSchema(name, schema);
  const document = generateOpenApiDocument(appRouter, {
    title: 'Browser Device Operator Service',
    description:
      'Run natural-language browser tasks on cloud browser devices. Every answer carries `X-Request-Id`; keyed answers carry `RateLimit-*` headers; ' +
      'errors have the `Error` body.',
    version: '0.1.0',
    baseUrl: `${publicUrl}/v1`,
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'svc_operator_<env>_<key_id>_<secret>' },
      escalationBearer: { type: 'http', scheme: 'bearer', description: 'The per-escalation token POSTed to the escalation URL (esctok_...)' },
    },
  });
  const components = (document.components ??= {});
  // trpc-to-openapi's own error shapes: replaced by the CONTRACT.md body below.
  components.schemas = Object.fromEntries(Object.entries(components.schemas ?? {}).filter(([name]) => !name.startsWith('error.')));
  components.schemas.Error = ERROR_BODY_SCHEMA;
  components.headers = { ...components.headers, ...HEADERS };
  Object.assign(components.schemas, ...rawEntryPoints.map((entry) => entry.openapi?.components ?? {}), webhookComponents);
  // Schemas no procedure returns (the stream's step) are converted directly.
  for (const [name, schema] of Object.entries(streamedSchemas)) {
    const { $schema: _dialect, ...converted } = z.toJSONSchema(schema, { io: 'output' }) as Record<string, unknown>;
    components.schemas[name] ??= converted as SchemaObject;
  }

  const procedures = appRouter._def.procedures as Record<string, Procedure>;
  for (const [name, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta;
    if (meta?.openapi === undefined) continue;
    const path = meta.openapi.path.replace(/\/+$/, '');
    const operation = (document.paths?.[path] as Record<string, Operation> | undefined)?.[meta.openapi.method.toLowerCase()];
    if (operation?.responses === undefined) continue;
    const keyed = meta.caller?.kind === 'api_key';
    const codes = errorCodesOf(name, meta, operation);
    if (codes.includes('idempotency_conflict')) operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
    const id = pascal(operation.operationId ?? name);
    nameInline(document, operation.requestBody?.content?.['application/json'], `${id}Request`);

    const status = meta.successStatus ?? 200;
    const success = operation.responses['200']!;
    nameInline(document, success.content?.['application/json'], `${id}Response`);
    const headers = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' }, ...(keyed ? rateLimitHeaderRefs() : {}) };
    operation.responses = {
      [String(status)]: status === 204 ? { description: 'No content', headers } : { ...success, description: success.description ?? 'Success', headers },
      ...(errorResponses(codes, keyed) as Operation['responses']),
    };
    (operation as { security?: unknown }).security =
      meta.caller?.kind === 'escalation_bearer' ? [{ escalationBearer: [] }] : keyed ? [{ bearerAuth: [] }] : [];
  }
  for (const entry of rawEntryPoints) {
    if (entry.openapi !== undefined) Object.assign((document.paths![entry.path] ??= {}), { [entry.method.toLowerCase()]: rawOperationOf(entry, entry.openapi) });
  }
  document.webhooks = webhooksOpenApi() as OpenAPIObject['webhooks'];
  return nameJsonValues(document);
}
