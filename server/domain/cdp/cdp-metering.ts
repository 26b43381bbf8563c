import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../../db/client';
import { cdpSessions } from '../../../db/schema';
import { DAY_MS, timestampParam } from '../devices/metering';

/**
 * Seconds of CDP sessions in the rolling 24 h ending `now`, metered like live-view
 * sessions (usage kind `session_duration`): from creation until closed or expired, the
 * time its URL or its connection gives access to the device.
 */
export async function cdpSecondsInWindow(db: DbOrTx, orgId: string, now: Date): Promise<number> {
  const windowStart = timestampParam(new Date(now.getTime() - DAY_MS));
  const end = sql`least(coalesce(${cdpSessions.closedAt}, ${cdpSessions.expiresAt}), ${cdpSessions.expiresAt}, ${timestampParam(now)})`;
  const [row] = await db
    .select({ seconds: sql<string>`coalesce(sum(greatest(0, extract(epoch from (${end} - greatest(${cdpSessions.createdAt}, ${windowStart}))))), 0)` })
    .from(cdpSessions)
    .where(and(eq(cdpSessions.orgId, orgId), sql`${end} > ${windowStart}`));
  return Math.floor(Number(row?.seconds ?? 0));
}
