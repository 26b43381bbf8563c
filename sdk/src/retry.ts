import { connectionError, retryAfterSeconds } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (429, 503 and broken connections). Default 3. */
  maxRetries: number;
  /** First backoff when the service gives no Retry-After; doubled each time. Default 500 ms. */
  initialDelayMs: number;
  /** Longest single wait, Retry-After included. Default 30 s. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 3, initialDelayMs: 500, maxDelayMs: 30_000 };

const RETRIED_STATUSES = new Set([429, 503]);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);

export const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });

export function backoffMs(attempt: number, options: RetryOptions, retryAfter: number | undefined): number {
  if (retryAfter !== undefined) return Math.min(options.maxDelayMs, retryAfter * 1000);
  const base = options.initialDelayMs * 2 ** attempt;
  // Full jitter keeps many clients that failed together from retrying together.
  return Math.min(options.maxDelayMs, base / 2 + Math.random() * (base / 2));
}

/**
 * A fetch that gives every POST an `Idempotency-Key` (unless the caller set one) and
 * retries 429 and 503 answers, honouring `Retry-After`, with the same key, so a retried
 * create never makes two devices or tasks. Broken connections are retried only when the
 * request is safe to repeat (a read, a delete, or a POST carrying its idempotency key).
 */
export function retryingFetch(base: typeof fetch, options: RetryOptions, newKey: () => string): (request: Request) => Promise<Response> {
  return async (request: Request) => {
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', newKey());
    const repeatable = SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt++) {
      const copy = request.clone();
      let response: Response;
      try {
        response = await base(copy);
      } catch (error) {
        if (request.signal.aborted || !repeatable || attempt >= options.maxRetries) throw connectionError(error);
        await sleep(backoffMs(attempt, options, undefined), request.signal);
        continue;
      }
      if (!RETRIED_STATUSES.has(response.status) || attempt >= options.maxRetries) return response;
      const wait = backoffMs(attempt, options, retryAfterSeconds(response));
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}
