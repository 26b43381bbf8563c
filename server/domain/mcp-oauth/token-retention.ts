import { and, isNull, lte, notExists, eq, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { mcpOauthGrants, mcpOauthTokens } from '../../../db/schema';

/**
 * Removes what can no longer open anything: tokens past their expiry (a used refresh token
 * is kept until then, so its reuse is still recognized), and approvals whose code lapsed
 * unexchanged. Ended grants with history stay, as the audit trail names them.
 */
export async function deleteExpiredOAuthTokens(db: Db): Promise<void> {
  await db.delete(mcpOauthTokens).where(lte(mcpOauthTokens.expiresAt, sql`now()`));
  await db
    .delete(mcpOauthGrants)
    .where(
      and(
        isNull(mcpOauthGrants.codeUsedAt),
        lte(mcpOauthGrants.codeExpiresAt, sql`now() - interval '1 day'`),
        notExists(db.select({ one: sql`1` }).from(mcpOauthTokens).where(eq(mcpOauthTokens.grantId, mcpOauthGrants.id))),
      ),
    );
}
