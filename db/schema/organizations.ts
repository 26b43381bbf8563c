import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

export const organizations = pgTable(
  'organizations',
  {
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
    /**
     * The HMAC key escalation deliveries are signed with (`whsec_…`, like a webhook
     * endpoint's secret). Kept in clear because it must sign: with webhook secrets, the one
     * exception to storing secrets as hashes.
     */
    escalationSigningSecret: text('escalation_signing_secret'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
  },
  (table) => [
    // Every escalation delivery is signed: an organization with a URL has a secret.
    check('organizations_escalation_url_signed', sql`${table.escalationUrl} is null or ${table.escalationSigningSecret} is not null`),
    // The console's list, newest first, reads a page without sorting every organization.
    index('organizations_page_idx').on(table.createdAt.desc(), table.id.desc()),
  ],
);
