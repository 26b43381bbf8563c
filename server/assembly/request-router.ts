import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseApiKey, maskApiKey } from '../domain/keys/api-key-format';
import type { Logger } from '../core/log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { createRouteLabeler } from '../metrics/route-label';
import type { Services } from '../services/services';
import type { TaskStepFeeds } from '../domain/tasks/task-step-feeds';
import { bearerOf } from '../http/bearer';
import type { EventStreams } from '../http/event-stream';
import { entrances, entranceFor } from './entry-points';
import { newRequestId } from './v1-handler';

export interface RequestRouterOptions {
  services: Services;
  /** The task step feeds and event-stream slots the task event stream is served with. */
  stepFeeds: TaskStepFeeds;
  eventStreams: EventStreams;
  openApiDocument: () => unknown;
  /** Ready once started while the database and the browser provider answer; otherwise why not. */
  readiness: () => Promise<Readiness>;
  metrics: ServiceMetrics;
  /** The MCP server over Streamable HTTP (server/mcp); absent, /mcp is 404. */
  mcp?: (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;
  /** The authorization server of /mcp and its metadata (server/mcp/oauth). */
  oauth?: (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>;
  /** Next.js request handler for the console; null when the console is not served. */
  console: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null;
}

export type Readiness = { ok: true } | { ok: false; reason: 'starting_or_stopping' | 'database_unreachable' | 'browser_provider_unreachable' };

/**
 * The one HTTP server's dispatch: each request goes to the entrance that serves its path
 * (entry-points.ts, which lists them all), labelled for the metrics by it, and logged.
 */
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
    const requestId = newRequestId();
    res.setHeader('X-Request-Id', requestId);
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const method = req.method ?? 'GET';
    recordWhenFinished(req, res, { log: accessLog, metrics: options.metrics, requestId, path, route: routeLabel(method, path) });
    await entranceFor(list, method, path).serve(req, res, requestId, path);
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
