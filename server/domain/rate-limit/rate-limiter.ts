import type { ServerResponse } from 'node:http';
import pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors';

export interface RateLimitSettings {
  perSecond: number;
  burst: number;
  store: 'memory' | 'postgres';
}

/**
 * Per-key limit: `burst` requests per window of burst/perSecond seconds, which averages
 * `perSecond` and lets a client spend the whole burst at once. One instance keeps the
 * counters in memory; instances sharing a database keep them in PostgreSQL.
 */
export class RateLimiter {
  private readonly limiter: RateLimiterAbstract;
  private readonly pool: pg.Pool | null;

  private constructor(limiter: RateLimiterAbstract, pool: pg.Pool | null, private readonly limit: number) {
    this.limiter = limiter;
    this.pool = pool;
  }

  static async create(settings: RateLimitSettings, databaseUrl: string): Promise<RateLimiter> {
    const windowSecs = Math.max(1, Math.round(settings.burst / settings.perSecond));
    const options = { points: settings.burst, duration: windowSecs, keyPrefix: 'api_key' };
    if (settings.store === 'memory') return new RateLimiter(new RateLimiterMemory(options), null, settings.burst);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    const limiter = await new Promise<RateLimiterPostgres>((resolve, reject) => {
      const created: RateLimiterPostgres = new RateLimiterPostgres(
        { ...options, storeClient: pool, storeType: 'pool', tableName: 'rate_limits' },
        (error?: Error) => (error === undefined ? resolve(created) : reject(error)),
      );
    });
    return new RateLimiter(limiter, pool, settings.burst);
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

  async close(): Promise<void> {
    await this.pool?.end();
  }

  private setHeaders(res: ServerResponse, state: RateLimiterRes): void {
    res.setHeader('RateLimit-Limit', String(this.limit));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
    res.setHeader('RateLimit-Reset', String(Math.max(0, Math.ceil(state.msBeforeNext / 1000))));
  }
}
