import type { IncomingMessage, ServerResponse } from 'node:http';
import { callTRPCProcedure } from '@trpc/server';
import { getPathRegExp, normalizePath } from 'trpc-to-openapi';
import type { EntryServices, RawEntryPoint } from '../api/entry-point';
import { appRouter, rawEntryPoints } from '../api/router';
import { ApiError } from '../core/errors';
import { unstorableInput } from '../core/storable-text';
import type { Context } from '../trpc/context';
import type { Meta } from '../trpc/init';
import { decodePathSegment } from '../http/path-segment';
import { readJsonBody } from '../http/read-json-body';
import { resolveCaller } from '../http/resolve-caller';
import { sendErrorResponse } from '../trpc/send-error';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** One /v1 route: its method, its path as the document names it, and how a matched request is served. */
interface V1Route {
  method: string;
  pattern: RegExp;
  /** The metrics label, `GET /v1/devices/{id}`. */
  label: string;
  serve(req: IncomingMessage, res: ServerResponse, requestId: string, url: URL, pathInput: Record<string, string>): Promise<void>;
}

/**
 * The /v1 dispatcher, read off the one registry of /v1 entry points (api/router.ts): the
 * procedures, by their meta's method and path, and the raw routes, by their declarations.
 * A request is matched as trpc-to-openapi matches it (its path templates and
 * normalization); an unmatched one is 405 with `Allow` where another method serves the
 * path, else 404; `label` names a request's route for the metrics.
 *
 * A matched procedure is called the way tRPC's own HTTP adapters call one
 * (`callTRPCProcedure`): its middlewares (the caller's checks, entitlement), its zod input
 * and output and its resolver run as written. Why not trpc-to-openapi's
 * `createOpenApiNodeHttpHandler`: per request it builds a WHATWG Request and
 * AbortController nobody reads, a router caller proxy and the URL twice, and writes errors
 * in its own body that had to be rewritten; measured, that was a third of the CPU of a
 * `GET /v1/whoami` (docs/performance.md). A raw route's caller is resolved by its rule
 * before its handler runs.
 */
export function createV1Dispatcher(services: EntryServices) {
  const routes = [...rawEntryPoints.map((entry) => rawRoute(services, entry)), ...procedureRoutes(services)];

  return {
    async handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
      // Parsed as trpc-to-openapi parses it: host prepended, so `//x` stays a path.
      const url = new URL(`http://localhost${req.url!.slice('/v1'.length)}`);
      const path = normalizePath(url.pathname);
      const method = req.method ?? 'GET';
      for (const route of routes) {
        if (route.method !== method) continue;
        const match = route.pattern.exec(path);
        if (match !== null) return route.serve(req, res, requestId, url, match.groups ?? {});
      }
      sendErrorResponse(services.log, res, requestId, unmatched(res, routes, path));
    },
    /** The route a request names, for the metrics: `unmatched` where none serves it. */
    label(method: string, subPath: string): string {
      const path = normalizePath(subPath);
      return routes.find((route) => route.method === method && route.pattern.test(path))?.label ?? 'unmatched';
    },
  };
}

function rawRoute(services: EntryServices, entry: RawEntryPoint): V1Route {
  const serve = rawEntryHandler(services, entry);
  return { method: entry.method, pattern: getPathRegExp(entry.path), label: `${entry.method} /v1${entry.path}`, serve: (req, res, requestId, _url, pathInput) => serve(req, res, requestId, pathInput) };
}

/** A raw entry point served: its caller resolved by its rule, then its handler; what either throws answered as CONTRACT.md's error. */
export function rawEntryHandler(services: EntryServices, entry: RawEntryPoint) {
  return async (req: IncomingMessage, res: ServerResponse, requestId: string, pathInput: Record<string, string>): Promise<void> => {
    try {
      const params = Object.fromEntries(Object.entries(pathInput).map(([name, value]) => [name, decodePathSegment(value)]));
      const subject = entry.subject === undefined ? undefined : params[entry.subject];
      const caller = await resolveCaller(services, req, res, entry.caller, { subject });
      await entry.handle({ req, res, requestId, params, caller, services });
    } catch (error) {
      sendErrorResponse(services.log, res, requestId, error);
    }
  };
}

/** Every procedure with a REST route, served as the tRPC procedure it is. */
function procedureRoutes(services: EntryServices): V1Route[] {
  const procedures = appRouter._def.procedures as Record<string, { _def: { meta?: Meta; type: 'query' | 'mutation' } }>;
  return Object.entries(procedures).flatMap(([name, { _def: { meta, type } }]) => {
    if (meta?.openapi === undefined) return [];
    const { method, path } = meta.openapi;
    const template = normalizePath(path);
    const successStatus = meta.successStatus ?? 200;
    return [{ method, pattern: getPathRegExp(template), label: `${method} /v1${template}`, serve: (req, res, requestId, url, pathInput) => callProcedure(services, { name, type, successStatus }, req, res, requestId, url, pathInput) }];
  });
}

async function callProcedure(services: EntryServices, procedure: { name: string; type: 'query' | 'mutation'; successStatus: number }, req: IncomingMessage, res: ServerResponse, requestId: string, url: URL, pathInput: Record<string, string>): Promise<void> {
  let bodyError: ApiError | null = null;
  let sent: Record<string, unknown>;
  if (METHODS_WITH_BODY.has(req.method ?? 'GET')) {
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
      path: procedure.name,
      type: procedure.type,
      ctx,
      getRawInput: async () => input,
      signal: undefined,
      batchIndex: 0,
    });
    sendResult(res, procedure.successStatus, data);
  } catch (error) {
    sendErrorResponse(services.log, res, requestId, error);
  }
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

/** No route answers this method and path: 405 with `Allow` if another method serves it, else 404. */
function unmatched(res: ServerResponse, routes: readonly V1Route[], path: string): ApiError {
  const allowed = [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))];
  if (allowed.length === 0) return new ApiError('not_found');
  res.setHeader('Allow', allowed.join(', '));
  return new ApiError('method_not_allowed');
}
