import { pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

/**
 * Where each host (a data directory, `devices.host_id`) can be reached by the other
 * instances: the live-view gateway of one instance relays sessions of devices whose
 * browser runs on another.
 */
export const hosts = pgTable('hosts', {
  hostId: text('host_id').primaryKey(),
  internalUrl: text('internal_url').notNull(),
  updatedAt: timestampMs('updated_at').notNull().defaultNow(),
  /**
   * Written every few seconds by the host's running service: a host silent for long is
   * dead (its devices on a shared browser pool are adopted), and silent for longer than
   * its browsers are kept, gone for good (its local devices' tasks fail).
   */
  heartbeatAt: timestampMs('heartbeat_at').notNull().defaultNow(),
});
