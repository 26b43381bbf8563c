import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { escalations } from '../../db/schema';
import { parsePublicId } from '../../server/domain/ids';

/**
 * Brings a pending escalation's expiry to now, as its time to live passing would: the
 * escalation worker expires what is due by the database's clock within its next tick.
 * Expiry tests use it rather than wait a TTL out (long enough, in their files, for the
 * other tests' answers on a loaded host); that the TTL sets expires_at is checked apart.
 */
export async function expireEscalationNow(db: Db, publicId: string): Promise<void> {
  const id = parsePublicId('escalation', publicId);
  if (id === null) throw new Error(`${publicId} is not an escalation id`);
  const expired = await db.update(escalations).set({ expiresAt: sql`now()` }).where(eq(escalations.id, id)).returning({ id: escalations.id });
  if (expired.length !== 1) throw new Error(`escalation ${publicId} not found`);
}
