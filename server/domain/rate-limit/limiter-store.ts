import pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';

export type LimiterStoreKind = 'memory' | 'postgres';

export interface LimiterOptions {
  /** Points a key may spend per window. */
  points: number;
  /** Window length in seconds. */
  duration: number;
  /** Namespace of this limiter's keys, so limiters sharing a store never mix counters. */
  keyPrefix: string;
}

/**
 * Where the counters of every limiter of the service live (rate-limiter-flexible): in this
 * process's memory, or in PostgreSQL (the `rate_limits` table, db/schema/rate-limits.ts) so
 * instances sharing a database count together. One pool serves every limiter.
 */
export class LimiterStore {
  private constructor(
    private readonly pool: pg.Pool | null,
  ) {}

  static open(kind: LimiterStoreKind, databaseUrl: string): LimiterStore {
    return new LimiterStore(kind === 'memory' ? null : new pg.Pool({ connectionString: databaseUrl, max: 4 }));
  }

  limiter(options: LimiterOptions): RateLimiterAbstract {
    if (this.pool === null) return new RateLimiterMemory(options);
    // The table is the migrations' (db/schema/rate-limits.ts): the library must not make it.
    return new RateLimiterPostgres({ ...options, storeClient: this.pool, storeType: 'pool', tableName: 'rate_limits', tableCreated: true });
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }
}
