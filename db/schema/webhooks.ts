import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    /** null means organization-wide: the endpoint sees every Space. */
    spaceId: uuid('space_id'),
    url: text('url').notNull(),
    description: text('description'),
    enabled: boolean('enabled').notNull().default(true),
    /** Empty means every deliverable event type. */
    eventTypes: text('event_types').array().notNull(),
    /** Kept in clear because it must sign; never returned after creation. */
    secret: text('secret').notNull(),
    failureCount: integer('failure_count').notNull().default(0),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    updatedAt: timestampMs('updated_at').notNull().defaultNow(),
    disabledAt: timestampMs('disabled_at'),
    lastError: text('last_error'),
    lastSuccessAt: timestampMs('last_success_at'),
  },
  (table) => [index('webhook_endpoints_page_idx').on(table.orgId, table.createdAt.desc(), table.id.desc())],
);

/** The outbox: every domain event, written in the transaction of the change that caused it. */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    spaceId: uuid('space_id'),
    type: text('type').notNull(),
    /** The full envelope exactly as delivered (CONTRACT.md). */
    envelope: jsonb('envelope').notNull(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
  },
  (table) => [index('events_org_created_idx').on(table.orgId, table.createdAt)],
);

export const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const;

/** One row per (event, endpoint); fanned out in the same transaction as the event. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').notNull(),
    status: text('status', { enum: deliveryStatuses }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestampMs('next_attempt_at').notNull().defaultNow(),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestampMs('lease_expires_at'),
    lastError: text('last_error'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    completedAt: timestampMs('completed_at'),
  },
  (table) => [
    index('webhook_deliveries_due_idx')
      .on(table.nextAttemptAt)
      .where(sql`${table.status} = 'pending'`),
    index('webhook_deliveries_endpoint_idx').on(table.endpointId),
  ],
);
