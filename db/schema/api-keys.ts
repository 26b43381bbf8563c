import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';
import { organizations } from './organizations';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The public 12-character base32 part of the key, used to find the row. */
    keyId: text('key_id').notNull().unique(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    env: text('env', { enum: ['live', 'test'] }).notNull(),
    /** Hex SHA-256 of the secret part; the secret itself is never stored. */
    secretHash: text('secret_hash').notNull(),
    scopes: text('scopes').array().notNull(),
    /** Empty means organization-wide. */
    spaceIds: uuid('space_ids').array().notNull(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    revokedAt: timestampMs('revoked_at'),
    lastUsedAt: timestampMs('last_used_at'),
  },
  (table) => [index('api_keys_org_idx').on(table.orgId)],
);
