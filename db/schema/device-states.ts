import { jsonb, pgTable, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';
import { devices } from './devices';

/**
 * What a device on a remote browser (browserless) keeps between launches: its cookies and
 * localStorage (server/browser/device-state.ts gives the shape), saved when its browser
 * closes. Kept here rather than on one machine's disk so any instance can launch any
 * device; removed when the device is deleted.
 */
export const deviceStates = pgTable('device_states', {
  deviceId: uuid('device_id')
    .primaryKey()
    .references(() => devices.id, { onDelete: 'cascade' }),
  state: jsonb('state').notNull(),
  savedAt: timestampMs('saved_at').notNull().defaultNow(),
});
