import { bigint, integer, pgTable, varchar } from 'drizzle-orm/pg-core';

/**
 * The counters of the rate limits when OPERATOR_RATE_LIMIT_STORE=postgres, in the layout
 * rate-limiter-flexible's RateLimiterPostgres reads and writes (server/domain/rate-limit/
 * limiter-store.ts). Made here, under the migrations' lock, not by the library at start:
 * its `CREATE TABLE IF NOT EXISTS` from two instances starting at once on a new database
 * collide, and one of them failed to start ("type rate_limits already exists").
 */
export const rateLimits = pgTable('rate_limits', {
  key: varchar('key', { length: 255 }).primaryKey(),
  points: integer('points').notNull().default(0),
  expire: bigint('expire', { mode: 'number' }),
});
