import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { hosts } from '../../../db/schema';

/** Records (on every start) the address other instances reach this host's server at. */
export async function registerHost(db: Db, hostId: string, internalUrl: string): Promise<void> {
  await db
    .insert(hosts)
    .values({ hostId, internalUrl })
    .onConflictDoUpdate({ target: hosts.hostId, set: { internalUrl, updatedAt: sql`now()` } });
}

/** The internal address of a host, or null when it never registered. */
export async function hostInternalUrl(db: Db, hostId: string): Promise<string | null> {
  const [row] = await db.select({ internalUrl: hosts.internalUrl }).from(hosts).where(eq(hosts.hostId, hostId));
  return row?.internalUrl ?? null;
}
