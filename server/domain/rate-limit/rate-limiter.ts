import type { ServerResponse } from 'node:http';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../core/errors';
import type { LimiterStore } from './limiter-store';

export interface RateLimitSettings {
  perSecond: number;
  burst: number;
}

/**
 * Per-key limit: `burst` requests per window of burst/perSecond seconds, which averages
 * `perSecond` and lets a client spend the whole burst at once. The counters live in the
 * service's limiter store (memory, or PostgreSQL shared by instances).
 */
export class RateLimiter {
  private constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly limit: number,
  ) {}

  static create(settings: RateLimitSettings, store: LimiterStore): RateLimiter {
    const windowSecs = Math.max(1, Math.round(settings.burst / settings.perSecond));
    const limiter = store.limiter({ points: settings.burst, duration: windowSecs, keyPrefix: 'api_key' });
    return new RateLimiter(limiter, settings.burst);
  }

  /** Spends one request of the key's budget, sets RateLimit-* headers, or throws 429. */
  async consume(keyId: string, res: ServerResponse): Promise<void> {
    try {
      const state = await this.limiter.consume(keyId);
      this.setHeaders(res, state);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      this.setHeaders(res, rejection);
      const retryAfter = String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
      throw new ApiError('rate_limited', { headers: { 'Retry-After': retryAfter } });
    }
  }

  private setHeaders(res: ServerResponse, state: RateLimiterRes): void {
    res.setHeader('RateLimit-Limit', String(this.limit));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
    res.setHeader('RateLimit-Reset', String(Math.max(0, Math.ceil(state.msBeforeNext / 1000))));
  }
}
