import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callTRPCProcedure } from '@trpc/server';
import { createProcedureCache, getPathRegExp, normalizePath, type OpenApiMethod } from 'trpc-to-openapi';
import { appRouter } from '../api/router';
import { ApiError } from '../core/errors';
import type { Services } from '../services/services';
import { unstorableInput } from '../core/storable-text';
import type { Context } from '../trpc/context';
import type { Meta } from '../trpc/init';
import type { RawRoute } from '../http/raw-route';
import { readJsonBody } from '../http/read-json-body';
import { sendErrorResponse } from '../trpc/send-error';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

interface RouteShape {
  pattern: RegExp;
  method: string;
}

/**
 * The `/v1` REST surface. Routes come from trpc-to-openapi: each procedure's
 * `meta.openapi` method and path, matched by the library's own route table
 * (`createProcedureCache`), from the same meta `/v1/openapi.json` is generated from. A
 * matched request calls its tRPC procedure the way tRPC's own HTTP adapters do
 * (`callTRPCProcedure`): the procedure's middlewares (authentication, rate limit, scope,
 * entitlement), its zod input and output and its resolver all run as written.
 *
 * Why not trpc-to-openapi's `createOpenApiNodeHttpHandler`: per request it builds a
 * WHATWG Request and AbortController nobody reads, a router caller proxy and the URL
 * twice, and writes errors in its own body that had to be rewritten; measured, that was
 * a third of the CPU of a `GET /v1/whoami` (docs/performance.md). This handler keeps its
 * routing and input rules and drops the rest.
 */
export function createV1Handler(services: Services, rawRoutes: readonly RawRoute[]) {
  const findProcedure = createProcedureCache(appRouter);
  // Raw routes count as routes for 405: POST to the event stream is a wrong method, not an unknown path.
  const routes = [...routeShapes(), ...rawRoutes.map(({ method, pattern }) => ({ method, pattern }))];

  return async function handleV1(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    // Parsed as trpc-to-openapi parses it: host prepended, so `//x` stays a path.
    const url = new URL(`http://localhost${req.url!.slice('/v1'.length)}`);
    const path = normalizePath(url.pathname);
    const method = req.method ?? 'GET';
    const match = findProcedure(method as OpenApiMethod, path);
    if (match?.procedure === undefined) return sendErrorResponse(services.log, res, requestId, unmatched(res, routes, path));
    const { procedure, pathInput } = match;
    const meta = procedure.procedure._def.meta as Meta;

    let bodyError: ApiError | null = null;
    let sent: Record<string, unknown>;
    if (METHODS_WITH_BODY.has(method)) {
      const body = await readJsonBody(req);
      if (!body.ok && body.error.apiCode === 'payload_too_large') res.setHeader('Connection', 'close');
      // A body error waits until the procedure's guard has authenticated and authorized
      // the caller, so 401/429/403 answer first, in the order CONTRACT.md gives.
      bodyError = body.ok ? null : body.error;
      sent = body.ok ? body.body : {};
    } else {
      sent = queryParameters(url.searchParams);
    }
    // Text PostgreSQL cannot store, anywhere in the body or query string, is refused the
    // same way, before any procedure sees it. Path ids are not checked: a malformed id is
    // the route's 404, as CONTRACT.md wants.
    const unstorable = unstorableInput(sent);
    bodyError ??= unstorable === null ? null : new ApiError('invalid_request', unstorable);
    const input = { ...sent, ...pathInput };

    const ctx: Context = { requestId, req, res, services, bodyError };
    try {
      const data = await callTRPCProcedure({
        router: appRouter,
        path: procedure.path,
        type: procedure.type,
        ctx,
        getRawInput: async () => input,
        signal: undefined,
        batchIndex: 0,
      });
      sendResult(res, meta.successStatus ?? 200, data);
    } catch (error) {
      sendErrorResponse(services.log, res, requestId, error);
    }
  };
}

/**
 * The query string as trpc-to-openapi reads it (a parameter given once is a string, given
 * several times a list), into an object without a prototype: the library's own reader
 * fails on `?valueOf=1` or `?__proto__=1`, taking the inherited member for a list.
 */
function queryParameters(searchParams: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of searchParams) {
    const earlier = query[name];
    query[name] = earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value];
  }
  return query;
}

function sendResult(res: ServerResponse, status: number, data: unknown): void {
  if (status === 204) {
    res.writeHead(204);
    res.end();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(data));
}

/** No procedure answers this method and path: 405 with `Allow` if the path is a route, else 404. */
function unmatched(res: ServerResponse, routes: RouteShape[], path: string): ApiError {
  const allowed = [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))];
  if (allowed.length === 0) return new ApiError('not_found');
  res.setHeader('Allow', allowed.join(', '));
  return new ApiError('method_not_allowed');
}

/** Every route's method and path pattern, matched as the route table matches them, for 405 versus 404. */
function routeShapes(): RouteShape[] {
  const procedures = appRouter._def.procedures as Record<string, { _def: { meta?: Meta } }>;
  return Object.values(procedures).flatMap(({ _def: { meta } }) =>
    meta?.openapi === undefined ? [] : [{ method: meta.openapi.method, pattern: getPathRegExp(normalizePath(meta.openapi.path)) }],
  );
}

export function newRequestId(): string {
  return `req_${randomUUID()}`;
}
