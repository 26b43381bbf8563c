import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { appRouter } from '../api/router';
import { ApiError } from '../errors';
import type { Services } from '../services';
import type { Context } from '../trpc/context';
import type { Meta } from '../trpc/init';
import { pinBodyFieldTypes } from './pin-body-types';
import { readJsonBody } from './read-json-body';
import { toApiError } from './to-api-error';

type RestRequest = IncomingMessage & { body?: unknown };

interface RequestState {
  requestId: string;
  bodyError: ApiError | null;
  error: ApiError | null;
}

interface RouteShape {
  pattern: RegExp;
  method: string;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The `/v1` REST surface: tRPC procedures exposed by trpc-to-openapi, with the
 * CONTRACT.md wire rules layered around the adapter (request ids, body limits and media
 * types, the error body, 404 versus 405). Requests reach it straight from the node
 * server, never through Next's router.
 */
export function createV1Handler(services: Services) {
  const procedures = appRouter._def.procedures as Record<string, { _def: { meta?: Meta; inputs?: unknown[] } }>;
  pinBodyFieldTypes(procedures);
  const successStatus = new Map<string, number>();
  const routes: RouteShape[] = [];
  for (const [path, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta;
    if (meta?.openapi === undefined) continue;
    if (meta.successStatus !== undefined) successStatus.set(path, meta.successStatus);
    routes.push({ method: meta.openapi.method, pattern: pathPattern(meta.openapi.path) });
  }

  const states = new WeakMap<IncomingMessage, RequestState>();

  const openApiHandler = createOpenApiNodeHttpHandler({
    router: appRouter,
    maxBodySize: 1024 * 1024,
    createContext: ({ req, res }): Context => {
      const state = states.get(req)!;
      // The node adapter is only ever given node:http objects (see handleV1).
      return { requestId: state.requestId, req, res: res as ServerResponse, services, bodyError: state.bodyError };
    },
    onError: ({ error, req }) => {
      const state = states.get(req);
      if (state === undefined) return;
      const { apiError, unexpected } = toApiError(error);
      state.error = apiError;
      if (unexpected) services.log.error({ err: error, requestId: state.requestId }, 'unexpected error in a /v1 procedure');
    },
    responseMeta: ({ paths, errors, ctx }) => {
      const state = ctx === undefined ? undefined : states.get(ctx.req);
      if (errors.length > 0 && state?.error != null) {
        return { status: state.error.status, headers: state.error.headers };
      }
      const path = paths?.[0];
      return { status: (path === undefined ? undefined : successStatus.get(path)) ?? 200 };
    },
  });

  return async function handleV1(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const state: RequestState = { requestId, bodyError: null, error: null };
    states.set(req, state);
    writeErrorsInContractShape(res, state);

    req.url = req.url!.slice('/v1'.length) || '/';
    const method = req.method ?? 'GET';
    if (METHODS_WITH_BODY.has(method)) {
      const result = await readJsonBody(req);
      (req as RestRequest).body = result.ok ? result.body : {};
      if (!result.ok) {
        state.bodyError = result.error;
        if (result.error.apiCode === 'payload_too_large') res.setHeader('Connection', 'close');
      }
      // The adapter insists on a JSON content type; the body has been read and judged above.
      req.headers['content-type'] = 'application/json';
    }

    await openApiHandler(req, res, () => {
      const path = new URL(req.url!, 'http://localhost').pathname.replace(/\/+$/, '') || '/';
      const known = routes.filter((route) => route.pattern.test(path));
      if (known.length > 0) res.setHeader('Allow', [...new Set(known.map((route) => route.method))].join(', '));
      sendError(res, state, new ApiError(known.length > 0 ? 'method_not_allowed' : 'not_found'));
    });
  };
}

/**
 * trpc-to-openapi writes its own error body; every error response is rewritten here,
 * just before it is sent, into `{"error": {code, message, request_id, param?}}` from the
 * ApiError recorded for the request.
 */
function writeErrorsInContractShape(res: ServerResponse, state: RequestState): void {
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  res.end = ((chunk?: unknown) => {
    if (res.statusCode === 204) {
      res.removeHeader('Content-Type');
      return end();
    }
    if (res.statusCode < 400) return end(chunk);
    const error = state.error ?? new ApiError('internal_error');
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.setHeader('Content-Type', 'application/json');
    return end(JSON.stringify(error.toBody(state.requestId)));
  }) as ServerResponse['end'];
}

function sendError(res: ServerResponse, state: RequestState, error: ApiError): void {
  state.error = error;
  res.statusCode = error.status;
  res.end();
}

function pathPattern(template: string): RegExp {
  const source = template.replace(/\/+$/, '').replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${source}$`);
}

export function newRequestId(): string {
  return `req_${randomUUID()}`;
}
