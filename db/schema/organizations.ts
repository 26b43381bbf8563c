import { boolean, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

export const organizations = pgTable('organizations', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  /** Product entitlement checked by the write gate. */
  entitled: boolean('entitled').notNull().default(true),
  /** Non-terminated devices allowed at once; null means no quota. */
  maxDevices: integer('max_devices'),
  /** Device-seconds allowed over any rolling 24 h; null means no quota. */
  maxDeviceSeconds: integer('max_device_seconds'),
  /** Where escalations are POSTed for a human to answer. */
  escalationUrl: text('escalation_url'),
  createdAt: timestampMs('created_at').notNull().defaultNow(),
});
