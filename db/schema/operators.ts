import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

/** People who run the preview: they sign in to the console with a console key. */
export const operators = pgTable('operators', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  /** The public part of the console key, `svc_console_<key_id>_<secret>`. */
  keyId: text('key_id').notNull().unique(),
  /** SHA-256 of the secret part; the key is shown once, when the operator is created. */
  secretHash: text('secret_hash').notNull(),
  createdAt: timestampMs('created_at').notNull().defaultNow(),
});

/** A signed-in console: the cookie holds the token, the database only its SHA-256. */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    operatorId: uuid('operator_id')
      .notNull()
      .references(() => operators.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    expiresAt: timestampMs('expires_at').notNull(),
  },
  (table) => [index('console_sessions_expires_idx').on(table.expiresAt)],
);
