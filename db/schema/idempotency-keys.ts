import { index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

/**
 * One row per (organization, route, Idempotency-Key). The row is inserted before the
 * work starts (state `in_progress`), which is what makes concurrent requests with one
 * key create one resource; it is completed with the response to replay.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    orgId: uuid('org_id').notNull(),
    route: text('route').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state', { enum: ['in_progress', 'completed'] }).notNull(),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    expiresAt: timestampMs('expires_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.orgId, table.route, table.key] }), index('idempotency_keys_expiry_idx').on(table.expiresAt)],
);
