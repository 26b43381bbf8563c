import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { ApiError, asApiError } from '../core/errors';
import { readBody } from '../http/read-body';
import { sendErrorResponse } from '../trpc/send-error';
import type { Services } from '../services/services';
import { unwrapTrpcError } from '../trpc/unwrap-trpc-error';
import { consoleAppRouter } from './console-router';

/** Mount point of the console API on the service's port. */
export const CONSOLE_API_PREFIX = '/console/api/';
/** Calls one request may batch. The console's pages send one call per request. */
const CONSOLE_MAX_BATCH = 10;

/**
 * The console API handler: tRPC's node adapter over the console router, behind the
 * limits that must hold before anything is read or authenticated, each answered with the
 * CONTRACT.md error body: a batch of at most CONSOLE_MAX_BATCH calls (400), every call
 * refused (429) to an address that failed to authenticate too often (console sign-ins
 * count, with every other bearer entrance), and a body of at most 1 MiB (413, refused as
 * soon as the declared length or the bytes received pass it). Past them, errors leave in
 * tRPC's shape as the error table makes them (server/trpc/api-error-shape.ts), with the
 * table's status and an error's own headers (Retry-After).
 */
export function createConsoleHandler(services: Services): (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void> {
  const options = {
    router: consoleAppRouter,
    basePath: CONSOLE_API_PREFIX,
    onError: ({ error }: { error: unknown }) => {
      if (asApiError(unwrapTrpcError(error)).unexpected) services.log.error({ err: error }, 'console call failed');
    },
    responseMeta: ({ errors }: { errors: unknown[] }) => ({ headers: Object.assign({}, ...errors.map((error) => asApiError(unwrapTrpcError(error)).apiError.headers)) }),
  };

  return async function handleConsoleApi(req, res, requestId) {
    try {
      if (batchSize(req.url ?? CONSOLE_API_PREFIX) > CONSOLE_MAX_BATCH) {
        throw new ApiError('invalid_request', { message: `A console API batch holds at most ${CONSOLE_MAX_BATCH} calls.` });
      }
      await services.authThrottle.refuseIfBlocked(req);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        const body = await readBody(req);
        if (body === null) {
          res.setHeader('Connection', 'close');
          throw new ApiError('payload_too_large');
        }
        // tRPC's adapter takes a body already read from `req.body` instead of the stream.
        Object.assign(req, { body: body.toString('utf8') });
      }
    } catch (error) {
      sendErrorResponse(services.log, res, requestId, error);
      return;
    }
    // The context is the /v1 procedures' (one tRPC instance), with this request's id, so
    // the adapter is bound per request; the console reads bodies itself, above, so there
    // is never a deferred body error.
    createHTTPHandler({ ...options, createContext: () => ({ requestId, req, res, services, bodyError: null, viaConsole: true as const }) })(req, res);
  };
}

/**
 * How many calls a console API URL makes: tRPC's adapter splits the decoded path at commas
 * when `batch=1`, so an encoded comma counts too.
 */
function batchSize(url: string): number {
  const parsed = new URL(url, 'http://localhost');
  return parsed.searchParams.get('batch') === '1' ? parsed.pathname.split(/,|%2c/i).length : 1;
}
