import { pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

/** Values every instance on one database must share, such as the cursor-signing secret. */
export const serviceSettings = pgTable('service_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: timestampMs('created_at').notNull().defaultNow(),
});
