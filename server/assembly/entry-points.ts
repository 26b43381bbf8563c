import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, serviceUnavailable } from '../core/errors';
import { OAUTH_PATHS } from '../domain/mcp-oauth/oauth-urls';
import { resolveCaller, type CallerRule } from '../http/resolve-caller';
import type { ServiceMetrics } from '../metrics/service-metrics';
import type { Services } from '../services/services';
import { CONSOLE_ARTIFACTS_PREFIX } from '../console/console-artifact-urls';
import { createConsoleArtifactsHandler } from '../console/console-artifacts';
import { CONSOLE_API_PREFIX, createConsoleHandler } from '../console/console-handler';
import { MCP_PATH } from '../mcp/mcp-route';
import { sendErrorResponse } from '../trpc/send-error';
import type { RequestRouterOptions } from './request-router';
import { sendDocsPage, sendScalarBundle } from './docs-page';
import { createV1Dispatcher } from './v1-handler';

type Serve = (req: IncomingMessage, res: ServerResponse, requestId: string, path: string) => Promise<void> | void;

/**
 * One entrance of the HTTP server: the paths it serves (one path, or every path under a
 * prefix), who may call it, how a request to it is labelled in the metrics, and its
 * handler. WebSocket upgrades are the gateways' (start-service.ts) for now.
 */
export interface Entrance {
  path: string;
  /** `prefix`: every path under `path` (which ends with `/`). */
  match: 'exact' | 'prefix';
  /** The methods it answers; another method falls through to the next entrance. Absent: any. */
  methods?: readonly string[];
  /** Who may call it: one rule, or `per_route` where its routes (or procedures) each declare theirs. */
  caller: CallerRule['kind'] | 'per_route';
  /** The metrics label of a request, by default `<method> <path>`. */
  label?: (method: string, path: string) => string;
  serve: Serve;
}

/**
 * What serves each URL, in the order requests are matched: the health probes, the
 * metrics, the API document and its reference page, /mcp and its OAuth authorization
 * server, /v1 (every JSON operation, byte and stream route: api/router.ts), the console's
 * API and byte routes, and the console's pages for the rest.
 */
export function entrances(options: RequestRouterOptions): Entrance[] {
  const { services } = options;
  const v1 = createV1Dispatcher({ ...services, stepFeeds: options.stepFeeds, eventStreams: options.eventStreams });
  const handleConsoleApi = createConsoleHandler(services);
  const handleConsoleArtifact = createConsoleArtifactsHandler(services);
  const openApiJson = JSON.stringify(options.openApiDocument());
  const oauth = options.oauth;
  const oauthPaths: Entrance[] =
    oauth === undefined
      ? []
      : [
          // The authorization server's endpoints answer OAuth's own bodies and 404 for a path they do not know.
          { path: '/oauth/', match: 'prefix', caller: 'per_route', label: knownOr([...Object.values(OAUTH_PATHS)], 'console'), serve: oauth },
          { path: OAUTH_PATHS.authorizationServerMetadata, match: 'exact', caller: 'anyone', serve: oauth },
          { path: OAUTH_PATHS.protectedResourceMetadata, match: 'prefix', caller: 'anyone', label: knownOr([OAUTH_PATHS.protectedResourceMetadata, `${OAUTH_PATHS.protectedResourceMetadata}/mcp`], 'console'), serve: oauth },
        ];
  return [
    { path: '/healthz', match: 'exact', caller: 'anyone', serve: (_req, res) => send(res, 200, 'application/json', '{"ok":true}') },
    {
      path: '/readyz',
      match: 'exact',
      caller: 'anyone',
      async serve(_req, res, requestId) {
        const readiness = await options.readiness();
        if (readiness.ok || readiness.reason !== 'database_unreachable') return send(res, readiness.ok ? 200 : 503, 'application/json', JSON.stringify(readiness));
        // The answer every route gives meanwhile, so a probe and a client read it alike.
        const unavailable = serviceUnavailable();
        send(res, unavailable.status, 'application/json', JSON.stringify({ ...readiness, ...unavailable.toBody(requestId) }), unavailable.headers);
      },
    },
    // Without OPERATOR_METRICS_TOKEN there is no such route (404): metrics name hosts, counts and routes.
    { path: '/metrics', match: 'exact', caller: 'metrics_token', serve: (req, res, requestId) => serveMetrics(req, res, requestId, options.metrics, services) },
    { path: '/v1/openapi.json', match: 'exact', methods: ['GET', 'HEAD'], caller: 'anyone', serve: (_req, res) => send(res, 200, 'application/json', openApiJson) },
    { path: '/docs', match: 'exact', caller: 'anyone', serve: (_req, res) => sendDocsPage(res) },
    { path: '/docs/', match: 'exact', caller: 'anyone', label: () => 'console', serve: (_req, res) => sendDocsPage(res) },
    { path: '/docs/scalar.js', match: 'exact', caller: 'anyone', label: () => 'console', serve: (_req, res) => sendScalarBundle(res) },
    ...(options.mcp === undefined ? [] : [{ path: MCP_PATH, match: 'exact', caller: 'mcp_bearer', serve: options.mcp } satisfies Entrance]),
    ...oauthPaths,
    { path: '/v1', match: 'exact', caller: 'per_route', label: (method) => v1.label(method, '/'), serve: (req, res, requestId) => v1.handle(req, res, requestId) },
    { path: '/v1/', match: 'prefix', caller: 'per_route', label: (method, path) => v1.label(method, path.slice('/v1'.length)), serve: (req, res, requestId) => v1.handle(req, res, requestId) },
    // The console's API is served with or without the console pages (tests call it directly).
    { path: CONSOLE_API_PREFIX, match: 'prefix', caller: 'per_route', label: () => 'console_api', serve: handleConsoleApi },
    // Its byte routes too: screenshots and recordings for the signed-in operator's <img> and <video>.
    { path: CONSOLE_ARTIFACTS_PREFIX, match: 'prefix', caller: 'operator', label: () => 'console', serve: handleConsoleArtifact },
    {
      path: '/',
      match: 'prefix',
      caller: 'anyone',
      label: () => 'console',
      serve: (req, res, requestId) => (options.console === null ? sendErrorResponse(services.log, res, requestId, new ApiError('not_found')) : options.console(req, res)),
    },
  ];
}

/** `<method> <path>` for the paths an entrance knows, else one label for the rest. */
function knownOr(paths: readonly string[], otherwise: string): (method: string, path: string) => string {
  const known = new Set(paths);
  return (method, path) => (known.has(path) ? `${method} ${path}` : otherwise);
}

/** The entrance that serves a request. The last entrance serves every path, so there is always one. */
export function entranceFor(list: readonly Entrance[], method: string, path: string): Entrance {
  return list.find((entrance) => (entrance.match === 'exact' ? path === entrance.path : path.startsWith(entrance.path)) && (entrance.methods === undefined || entrance.methods.includes(method)))!;
}

function send(res: ServerResponse, status: number, contentType: string, body: string | undefined, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'Content-Type': contentType });
  res.end(body);
}

/** GET /metrics, for a Prometheus scraper holding OPERATOR_METRICS_TOKEN as its bearer (failures count against its address). */
async function serveMetrics(req: IncomingMessage, res: ServerResponse, requestId: string, metrics: ServiceMetrics, services: Services): Promise<void> {
  try {
    if (services.config.metricsToken === null) throw new ApiError('not_found');
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError('method_not_allowed', { headers: { Allow: 'GET, HEAD' } });
    await resolveCaller(services, req, res, { kind: 'metrics_token' });
    const body = await metrics.render();
    send(res, 200, metrics.contentType, req.method === 'HEAD' ? undefined : body, { 'Cache-Control': 'no-store' });
  } catch (error) {
    sendErrorResponse(services.log, res, requestId, error);
  }
}
