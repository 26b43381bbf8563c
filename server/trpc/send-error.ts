import type { ServerResponse } from 'node:http';
import { asApiError } from '../core/errors';
import type { Logger } from '../core/log';
import { unwrapTrpcError } from './unwrap-trpc-error';

/**
 * Writes what a /v1 route threw as the CONTRACT.md error body, with the error's own
 * headers (Retry-After, ...). The unexpected is logged with the request id, never shown.
 */
export function sendErrorResponse(log: Logger, res: ServerResponse, requestId: string, error: unknown): void {
  const { apiError, unexpected } = asApiError(unwrapTrpcError(error));
  if (unexpected) log.error({ err: error, requestId }, 'unexpected error in a /v1 route');
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(apiError.status, { ...apiError.headers, 'Content-Type': 'application/json' });
  res.end(JSON.stringify(apiError.toBody(requestId)));
}
