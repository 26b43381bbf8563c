import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../core/errors';
import type { Logger } from '../core/log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { resolveCaller, type CallerSources } from '../http/resolve-caller';
import { sendErrorResponse } from '../trpc/send-error';

/**
 * GET /metrics for a Prometheus scraper holding OPERATOR_METRICS_TOKEN as its bearer.
 * Without a configured token the route does not exist (404): metrics name hosts, counts
 * and routes, which are nobody's business by default.
 */
export async function serveMetrics(req: IncomingMessage, res: ServerResponse, requestId: string, options: { metrics: ServiceMetrics; log: Logger; sources: CallerSources }): Promise<void> {
  if (options.sources.config.metricsToken === null) return sendErrorResponse(options.log, res, requestId, new ApiError('not_found'));
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return sendErrorResponse(options.log, res, requestId, new ApiError('method_not_allowed'));
  }
  try {
    // A bearer entrance like the others: failures count against the client's address.
    await resolveCaller(options.sources, req, res, { kind: 'metrics_token' });
    const body = await options.metrics.render();
    res.writeHead(200, { 'Content-Type': options.metrics.contentType, 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch (error) {
    sendErrorResponse(options.log, res, requestId, error);
  }
}
