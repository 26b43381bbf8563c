import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, serviceUnavailable } from '../core/errors';
import type { Logger } from '../core/log';
import { maskApiKey, parseApiKey } from '../domain/keys/api-key-format';
import { newPublicId } from '../domain/ids';
import { OAUTH_PATHS } from '../domain/mcp-oauth/oauth-urls';
import { SOCKET_PATHS } from '../domain/socket-paths';
import type { TaskStepFeeds } from '../domain/tasks/task-step-feeds';
import type { EventStreams } from '../domain/tasks/event-streams';
import type { DeviceSocketGateway } from '../gateway/device-socket-gateway';
import { bearerOf, resolveCaller, type CallerRule, type UpgradeCallerRule } from '../http/resolve-caller';
import { createRouteLabeler } from '../metrics/route-label';
import type { ServiceMetrics } from '../metrics/service-metrics';
import type { Services } from '../services/services';
import { CONSOLE_ARTIFACTS_PREFIX } from '../console/console-artifact-urls';
import { createConsoleArtifactsHandler } from '../console/console-artifacts';
import { CONSOLE_API_PREFIX, createConsoleHandler } from '../console/console-handler';
import { createMcpHandler, MCP_PATH } from '../mcp/mcp-route';
import { sendErrorResponse } from '../trpc/send-error';
import { sendDocsPage, sendScalarBundle } from './docs-page';
import { createV1Dispatcher } from './v1-handler';

export interface RequestRouterOptions {
  services: Services;
  /** The task step feeds and event-stream slots the task event stream is served with. */
  stepFeeds: TaskStepFeeds;
  eventStreams: EventStreams;
  openApiDocument: () => unknown;
  /** Ready once started while the database and the browser provider answer; otherwise why not. */
  readiness: () => Promise<Readiness>;
  metrics: ServiceMetrics;
  /** The authorization server of /mcp and its metadata (server/mcp/oauth). */
  oauth?: (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;
  /** Next.js request handler for the console; null when the console is not served. */
  console: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null;
}

export type Readiness = { ok: true } | { ok: false; reason: 'starting_or_stopping' | 'database_unreachable' | 'browser_provider_unreachable' };

/**
 * One entrance of the HTTP server: the paths it serves (one path, or every path under a
 * prefix), who may call it, how a request to it is labelled in the metrics, and its
 * handler. WebSocket upgrades have their own list (UpgradeEntrance).
 */
interface Entrance {
  path: string;
  /** `prefix`: every path under `path` (which ends with `/`). */
  match: 'exact' | 'prefix';
  /** The methods it answers; another method falls through to the next entrance. Absent: any. */
  methods?: readonly string[];
  /** Who may call it: one rule, or `per_route` where its routes (or procedures) each declare theirs. */
  caller: CallerRule['kind'] | 'per_route';
  /** The metrics label of a request, by default `<method> <path>`. */
  label?: (method: string, path: string) => string;
  serve(req: IncomingMessage, res: ServerResponse, requestId: string, path: string): Promise<void> | void;
}

/**
 * What serves each URL, in the order requests are matched: the health probes, the
 * metrics, the API document and its reference page, /mcp and its OAuth authorization
 * server, /v1 (every JSON operation, byte and stream route: api/router.ts), the console's
 * API and byte routes, and the console's pages for the rest.
 */
function entrances(options: RequestRouterOptions): Entrance[] {
  const { services } = options;
  const entryServices = { ...services, stepFeeds: options.stepFeeds, eventStreams: options.eventStreams };
  const v1 = createV1Dispatcher(entryServices);
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
    { path: MCP_PATH, match: 'exact', caller: 'mcp_bearer', serve: createMcpHandler(entryServices) },
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

/** The one HTTP server's dispatch: each request goes to the entrance that serves its path, labelled for the metrics by it, and logged. */
export function createRequestRouter(options: RequestRouterOptions) {
  const list = entrances(options);
  // Access lines are built only from fields that hold no secret (a key shows only its id),
  // so they skip the logger's redaction pass, which cost as much as writing the line.
  const accessLog = options.services.log.child({}, { redact: [] });
  const routeLabel = createRouteLabeler((method, path) => {
    const entrance = entranceFor(list, method, path);
    return entrance.label?.(method, path) ?? `${method} ${path}`;
  });

  return async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newPublicId('request');
    res.setHeader('X-Request-Id', requestId);
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const method = req.method ?? 'GET';
    recordWhenFinished(req, res, { log: accessLog, metrics: options.metrics, requestId, path, route: routeLabel(method, path) });
    await entranceFor(list, method, path).serve(req, res, requestId, path);
  };
}

type Upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * One WebSocket upgrade of the HTTP server: its path template (`{id}`: one segment naming
 * the session), who may open it, and the gateway (server/gateway/) that takes it, which
 * resolves that caller.
 */
interface UpgradeEntrance {
  path: string;
  caller: UpgradeCallerRule['kind'];
  pattern: RegExp;
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, id: string, query: string): void;
}

function upgradeEntrance<K extends UpgradeCallerRule['kind']>(path: string, caller: K, gateway: Pick<DeviceSocketGateway<K>, 'accept'>): UpgradeEntrance {
  const [before, after] = path.split('{id}');
  // As the path is, case aside, with a trailing slash and a query allowed (the templates hold no pattern characters).
  const pattern = new RegExp(`^${before}([^/?#]+)${after}/?(?:\\?.*)?$`, 'i');
  return { path, caller, pattern, accept: (req, socket, head, id, query) => gateway.accept(req, socket, head, { caller, id, pathAndQuery: `${before}${id}${after}${query}` }) };
}

export interface UpgradeRouterOptions {
  liveView: Pick<DeviceSocketGateway<'session_token'>, 'accept'>;
  cdp: Pick<DeviceSocketGateway<'cdp_secret'>, 'accept'>;
  /** Next.js's own upgrades (its development server's); null when the console is not served. */
  console: Upgrade | null;
}

/**
 * What takes each WebSocket upgrade: a live-view session's socket (its token offered as a
 * subprotocol) and a CDP session's DevTools socket (its secret in `token`); any other
 * upgrade is the console's, or 404.
 */
export function createUpgradeRouter(options: UpgradeRouterOptions): Upgrade {
  const list = [upgradeEntrance(SOCKET_PATHS.liveView, 'session_token', options.liveView), upgradeEntrance(SOCKET_PATHS.cdp, 'cdp_secret', options.cdp)];
  return (req, socket, head) => {
    // Node takes its own error listener off a socket it hands over as an upgrade. Until a
    // WebSocket owns it, or its refusal is written, a client resetting it raised an 'error'
    // nobody heard, and that ends the process: any client could stop the service so.
    socket.on('error', () => socket.destroy());
    const url = req.url ?? '';
    for (const entrance of list) {
      const id = entrance.pattern.exec(url)?.[1];
      if (id !== undefined) return entrance.accept(req, socket, head, id, url.includes('?') ? url.slice(url.indexOf('?')) : '');
    }
    if (options.console !== null) return options.console(req, socket, head);
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
  };
}

/** `<method> <path>` for the paths an entrance knows, else one label for the rest. */
function knownOr(paths: readonly string[], otherwise: string): (method: string, path: string) => string {
  const known = new Set(paths);
  return (method, path) => (known.has(path) ? `${method} ${path}` : otherwise);
}

/** The entrance that serves a request. The last entrance serves every path, so there is always one. */
function entranceFor(list: readonly Entrance[], method: string, path: string): Entrance {
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
