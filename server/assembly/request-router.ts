import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseApiKey, maskApiKey } from '../domain/keys/api-key-format';
import { ApiError, serviceUnavailable } from '../core/errors';
import { CONSOLE_ARTIFACTS_PREFIX } from '../console/console-artifact-urls';
import { createConsoleArtifactsHandler } from '../console/console-artifacts';
import { CONSOLE_API_PREFIX, createConsoleHandler } from '../console/console-handler';
import type { Logger } from '../core/log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { createRouteLabeler } from '../metrics/route-label';
import type { Services } from '../services/services';
import { sendDocsPage, sendScalarBundle } from './docs-page';
import { serveMetrics } from './metrics-route';
import type { RawRoute } from '../http/raw-route';
import { createV1Handler, newRequestId } from './v1-handler';
import { MCP_PATH } from '../mcp/mcp-route';
import { bearerOf } from '../http/bearer';
import { isOAuthPath } from '../mcp/oauth/oauth-routes';

export interface RequestRouterOptions {
  services: Services;
  rawRoutes: RawRoute[];
  openApiDocument: () => unknown;
  /** Ready once started while the database and the browser provider answer; otherwise why not. */
  readiness: () => Promise<Readiness>;
  metrics: ServiceMetrics;
  /** The MCP server over Streamable HTTP (server/mcp); absent, /mcp is 404. */
  mcp?: (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;
  /** The authorization server of /mcp and its metadata (server/mcp/oauth), for the paths isOAuthPath names. */
  oauth?: (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;
  /** Next.js request handler for the console; null when the console is not served. */
  console: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null;
}

/**
 * Top-level dispatch of the one HTTP server: health probes, the OpenAPI document and
 * reference page, raw /v1 routes, the tRPC-backed /v1 API, the console's API, and
 * Next.js for the rest.
 */
export type Readiness = { ok: true } | { ok: false; reason: 'starting_or_stopping' | 'database_unreachable' | 'browser_provider_unreachable' };

export function createRequestRouter(options: RequestRouterOptions) {
  const handleV1 = createV1Handler(options.services, options.rawRoutes);
  const handleConsoleApi = createConsoleHandler(options.services);
  const handleConsoleArtifact = createConsoleArtifactsHandler(options.services);
  // Access lines are built only from fields that hold no secret (a key shows only its id),
  // so they skip the logger's redaction pass, which cost as much as writing the line.
  const accessLog = options.services.log.child({}, { redact: [] });
  const openApiJson = JSON.stringify(options.openApiDocument());
  const routeLabel = createRouteLabeler(options.rawRoutes);

  return async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    res.setHeader('X-Request-Id', requestId);
    const url = req.url ?? '/';
    const path = url.split('?', 1)[0]!;
    recordWhenFinished(req, res, { log: accessLog, metrics: options.metrics, requestId, path, route: routeLabel(req.method ?? 'GET', path) });

    if (path === '/healthz') return sendJson(res, 200, { ok: true });
    if (path === '/readyz') {
      const readiness = await options.readiness();
      if (readiness.ok || readiness.reason !== 'database_unreachable') return sendJson(res, readiness.ok ? 200 : 503, readiness);
      // The answer every route gives meanwhile, so a probe and a client read it alike.
      const unavailable = serviceUnavailable();
      res.writeHead(unavailable.status, { ...unavailable.headers, 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ...readiness, ...unavailable.toBody(requestId) }));
      return;
    }
    if (path === '/metrics') return serveMetrics(req, res, requestId, { metrics: options.metrics, log: options.services.log, sources: options.services });
    if (path === '/v1/openapi.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(openApiJson);
      return;
    }
    if (path === '/docs' || path === '/docs/') return sendDocsPage(res);
    if (path === MCP_PATH && options.mcp !== undefined) return options.mcp(req, res, requestId);
    if (options.oauth !== undefined && isOAuthPath(path)) return options.oauth(req, res, requestId);
    if (path === '/docs/scalar.js') return sendScalarBundle(res);

    if (path === '/v1' || path.startsWith('/v1/')) {
      const subPath = path.slice('/v1'.length);
      for (const raw of options.rawRoutes) {
        const match = raw.pattern.exec(subPath);
        if (match === null || raw.method !== req.method) continue;
        return raw.handle(req, res, { requestId, params: match.slice(1) });
      }
      return handleV1(req, res, requestId);
    }

    // The console's API is served with or without the console pages (tests call it directly).
    if (path.startsWith(CONSOLE_API_PREFIX)) return handleConsoleApi(req, res, requestId);
    // Its byte routes too: screenshots and recordings for the signed-in operator's <img> and <video>.
    if (path.startsWith(CONSOLE_ARTIFACTS_PREFIX)) return handleConsoleArtifact(req, res, requestId);
    if (options.console !== null) return options.console(req, res);
    const error = new ApiError('not_found');
    return sendJson(res, error.status, error.toBody(requestId));
  };
}

/**
 * When the response is finished, its latency goes into the metrics (by route template) and,
 * at level info, one structured access-log line is written. Query strings are left out and
 * a key is shown only by its id (`svc_operator_test_<key_id>_****`), never its secret.
 */
function recordWhenFinished(req: IncomingMessage, res: ServerResponse, request: { log: Logger; metrics: ServiceMetrics; requestId: string; path: string; route: string }): void {
  const logging = request.log.isLevelEnabled('info');
  const started = performance.now();
  // 'finish' is emitted once per response: a plain listener spares once()'s wrapper.
  res.on('finish', () => {
    const ms = performance.now() - started;
    request.metrics.observeRequest(request.route, res.statusCode, ms / 1000);
    if (!logging) return;
    const bearer = bearerOf(req);
    const parsed = bearer === null ? null : parseApiKey(bearer);
    request.log.info({
      requestId: request.requestId,
      method: req.method,
      path: request.path,
      status: res.statusCode,
      ms: Math.round(ms * 10) / 10,
      key: parsed === null ? undefined : maskApiKey(parsed.env, parsed.keyId),
    });
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
