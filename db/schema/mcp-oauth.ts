import { sql } from 'drizzle-orm';
import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';
import { organizations } from './organizations';

// The authorization server of /mcp (docs/api.md, "MCP authorization"): remote MCP clients
// register themselves, a person approves one with an API key, and the client then holds
// short-lived access tokens and a rotating refresh token that act with that key. Every
// secret (client secret, authorization code, token) is stored only as its SHA-256.

/** A client registered by RFC 7591 dynamic registration; it belongs to no organization until a person approves it. */
export const mcpOauthClients = pgTable(
  'mcp_oauth_clients',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The public client_id (`mcpc_...`). */
    clientId: text('client_id').notNull().unique(),
    clientName: text('client_name').notNull(),
    /** `none` (a public client: PKCE alone), `client_secret_post` or `client_secret_basic`. */
    tokenEndpointAuthMethod: text('token_endpoint_auth_method', { enum: ['none', 'client_secret_post', 'client_secret_basic'] }).notNull(),
    /** SHA-256 (hex) of the client secret; null for a public client. */
    secretHash: text('secret_hash'),
    /** Matched exactly against every authorization request. */
    redirectUris: text('redirect_uris').array().notNull(),
    /** The address that registered it: registrations are rate limited per address. */
    registeredFrom: text('registered_from').notNull(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
  },
  (table) => [index('mcp_oauth_clients_address_idx').on(table.registeredFrom, table.createdAt)],
);

/**
 * One approval: a person let a client act with an API key (with the scopes it asked for
 * that the key holds). It starts as an authorization code (single use, 60 s) and lives on
 * in the tokens issued for it; revoking it, or the key, ends them all.
 */
export const mcpOauthGrants = pgTable(
  'mcp_oauth_grants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    clientId: uuid('client_id')
      .notNull()
      .references(() => mcpOauthClients.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    /** The API key's public key id: its tokens act as that key. */
    keyId: text('key_id').notNull(),
    scopes: text('scopes').array().notNull(),
    /** The RFC 8707 resource the tokens are bound to (`<public url>/mcp`). */
    resource: text('resource').notNull(),
    codeHash: text('code_hash').notNull().unique(),
    codeChallenge: text('code_challenge').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    codeExpiresAt: timestampMs('code_expires_at').notNull(),
    codeUsedAt: timestampMs('code_used_at'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    revokedAt: timestampMs('revoked_at'),
    /** Why: `client_revoked`, `api_key_revoked`, `code_reused`, `refresh_token_reused`. */
    revokedReason: text('revoked_reason'),
  },
  (table) => [
    // Revoking a key revokes the grants made with it that are still live.
    index('mcp_oauth_grants_key_unrevoked_idx')
      .on(table.keyId)
      .where(sql`${table.revokedAt} is null`),
  ],
);

/** Access (1 h) and refresh (30 days, single use: each refresh rotates it) tokens of a grant. */
export const mcpOauthTokens = pgTable(
  'mcp_oauth_tokens',
  {
    /** SHA-256 (hex) of the token: what a presented token is looked up by. */
    tokenHash: text('token_hash').primaryKey(),
    grantId: uuid('grant_id')
      .notNull()
      .references(() => mcpOauthGrants.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['access', 'refresh'] }).notNull(),
    expiresAt: timestampMs('expires_at').notNull(),
    /** A refresh token's one use; a second presentation revokes the grant (reuse detection). */
    usedAt: timestampMs('used_at'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
  },
  (table) => [index('mcp_oauth_tokens_grant_idx').on(table.grantId), index('mcp_oauth_tokens_expiry_idx').on(table.expiresAt)],
);
