import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

export const auditEvents = pgTable(
  'audit_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    /** Space of the resource; null for organization-level resources. */
    spaceId: uuid('space_id'),
    /** Key id of the caller, or `system` for the service's own moves. */
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    resourceType: text('resource_type').notNull(),
    /** The public (prefixed) id of the resource. */
    resourceId: text('resource_id').notNull(),
    requestId: text('request_id'),
    /** Never holds secrets: callers pass only non-secret fields. */
    details: jsonb('details').notNull().default({}),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
  },
  (table) => [
    index('audit_events_page_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('audit_events_resource_idx').on(table.orgId, table.resourceId),
  ],
);
