import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

export const sessionModes = ['watch', 'control'] as const;
export type SessionMode = (typeof sessionModes)[number];

/** A time-limited live view of a device, and the takeover hold a control session may take. */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    spaceId: uuid('space_id').notNull(),
    deviceId: uuid('device_id').notNull(),
    mode: text('mode', { enum: sessionModes }).notNull(),
    /** SHA-256 (hex) of the session token; the token itself is shown once, on mint. */
    tokenHash: text('token_hash').notNull(),
    /** The key that minted it: the gateway re-checks it (not revoked) before relaying input. */
    keyId: text('key_id').notNull(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    expiresAt: timestampMs('expires_at').notNull(),
    revokedAt: timestampMs('revoked_at'),
    /** The task a takeover parked, while this session holds the hold. */
    holdTaskId: uuid('hold_task_id'),
    holdExpiresAt: timestampMs('hold_expires_at'),
  },
  (table) => [
    index('sessions_org_created_idx').on(table.orgId, table.createdAt),
    // One takeover per device at a time, whatever races.
    uniqueIndex('sessions_one_hold_per_device')
      .on(table.deviceId)
      .where(sql`${table.holdTaskId} is not null`),
    index('sessions_hold_expiry_idx')
      .on(table.holdExpiresAt)
      .where(sql`${table.holdTaskId} is not null`),
    // Revoking a key revokes the sessions it minted that are still live.
    index('sessions_key_unrevoked_idx')
      .on(table.keyId)
      .where(sql`${table.revokedAt} is null`),
  ],
);
