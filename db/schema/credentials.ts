import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';
import { organizations } from './organizations';

/**
 * The credential vault (docs/api.md, "Credential vault"). Every secret column holds a
 * sealed value (server/domain/credentials/secret-box.ts: AES-256-GCM under
 * OPERATOR_SECRETS_KEY), never the plaintext, so a dump of the database holds none.
 */
export const credentials = pgTable(
  'credentials',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    spaceId: uuid('space_id').notNull(),
    name: text('name').notNull(),
    /** Registrable domains; a fill is allowed on a page of one of them or their subdomains. */
    domains: text('domains').array().notNull(),
    /** Not a secret: the resource shows it. */
    username: text('username'),
    passwordSealed: text('password_sealed'),
    /** The TOTP parameters and secret as one sealed JSON document (totp.ts, TotpParameters). */
    totpSealed: text('totp_sealed'),
    notesSealed: text('notes_sealed'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    updatedAt: timestampMs('updated_at').notNull().defaultNow(),
    lastUsedAt: timestampMs('last_used_at'),
  },
  (table) => [
    uniqueIndex('credentials_space_name_idx').on(table.spaceId, table.name),
    index('credentials_page_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
  ],
);

/** One-time codes pushed for a credential (POST /v1/credentials/{id}/codes): valid 5 minutes, used once. */
export const credentialCodes = pgTable(
  'credential_codes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    credentialId: uuid('credential_id')
      .notNull()
      .references(() => credentials.id, { onDelete: 'cascade' }),
    codeSealed: text('code_sealed').notNull(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    expiresAt: timestampMs('expires_at').notNull(),
    usedAt: timestampMs('used_at'),
  },
  (table) => [index('credential_codes_fresh_idx').on(table.credentialId, table.createdAt.desc())],
);
