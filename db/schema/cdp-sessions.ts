import { sql } from 'drizzle-orm';
import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

// A graceful stop no longer ends a connection (it waits for its client, see
// domain/cdp/cdp-connection.ts); rows closed by one before that say `shutdown`.
export const cdpCloseReasons = ['client_closed', 'deleted', 'expired', 'key_revoked', 'device_gone', 'host_lost'] as const;
export type CdpCloseReason = (typeof cdpCloseReasons)[number];

/**
 * A customer's DevTools (CDP) access to a device: a one-time URL, then at most one
 * connection, which holds the device's task slot (devices.cdp_session_id) while it is open.
 */
export const cdpSessions = pgTable(
  'cdp_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    spaceId: uuid('space_id').notNull(),
    deviceId: uuid('device_id').notNull(),
    /** The key that created it: its revocation ends the connection. */
    keyId: text('key_id').notNull(),
    /** SHA-256 (hex) of the URL's secret; the secret itself is shown once, on create. */
    secretHash: text('secret_hash').notNull(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    expiresAt: timestampMs('expires_at').notNull(),
    /** Set when the secret was first used: it never opens a second connection at once. */
    connectedAt: timestampMs('connected_at'),
    /**
     * The instance whose process holds the connection (it runs the device's browser); null
     * before the first connection and while one the service closed with 1012 waits for its client.
     */
    connectionHostId: text('connection_host_id'),
    /** Renewed by that instance while the connection is open; a stale one frees the slot. Null while none holds it. */
    heartbeatAt: timestampMs('heartbeat_at'),
    closedAt: timestampMs('closed_at'),
    closeReason: text('close_reason', { enum: cdpCloseReasons }),
  },
  (table) => [
    index('cdp_sessions_org_created_idx').on(table.orgId, table.createdAt),
    index('cdp_sessions_open_idx')
      .on(table.connectionHostId)
      .where(sql`${table.connectedAt} is not null and ${table.closedAt} is null`),
  ],
);
