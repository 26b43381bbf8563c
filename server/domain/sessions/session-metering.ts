import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../../db/client';
import { sessions } from '../../../db/schema';
import { DAY_MS, timestampParam } from '../devices/metering';

/**
 * Seconds of session lifetime in the rolling 24 h ending `now`, summed over the
 * organization's sessions. A session is metered from mint until it is revoked or
 * expires, whether or not a socket is open: it is a live credential to the device for
 * all of that time.
 */
export async function sessionSecondsInWindow(db: DbOrTx, orgId: string, now: Date): Promise<number> {
  const windowStart = timestampParam(new Date(now.getTime() - DAY_MS));
  const end = sql`least(coalesce(${sessions.revokedAt}, ${sessions.expiresAt}), ${sessions.expiresAt}, ${timestampParam(now)})`;
  const [row] = await db
    .select({ seconds: sql<string>`coalesce(sum(greatest(0, extract(epoch from (${end} - greatest(${sessions.createdAt}, ${windowStart}))))), 0)` })
    .from(sessions)
    .where(and(eq(sessions.orgId, orgId), sql`${end} > ${windowStart}`));
  return Math.floor(Number(row?.seconds ?? 0));
}
