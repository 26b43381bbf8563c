import { eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, hosts } from '../../../db/schema';

/** How often a running service writes its host's heartbeat. */
export const HOST_HEARTBEAT_MS = 2_000;

/**
 * A host silent this long has no running service: five missed heartbeats, so a loaded
 * machine is not mistaken for a dead one. Its devices on a shared browser pool are then
 * adopted by a live host (device-adoption.ts).
 */
export const HOST_DEAD_MS = 10_000;

/** Records (on every start) the address other instances reach this host's server at. */
export async function registerHost(db: Db, hostId: string, internalUrl: string): Promise<void> {
  await db
    .insert(hosts)
    .values({ hostId, internalUrl })
    .onConflictDoUpdate({ target: hosts.hostId, set: { internalUrl, updatedAt: sql`now()`, heartbeatAt: sql`now()` } });
}

/** This host's service is alive: written every HOST_HEARTBEAT_MS while it runs. */
export async function heartbeatHost(db: Db, hostId: string): Promise<void> {
  await db.update(hosts).set({ heartbeatAt: sql`now()` }).where(eq(hosts.hostId, hostId));
}

/** The internal address of a host, or null when it never registered. */
export async function hostInternalUrl(db: Db, hostId: string): Promise<string | null> {
  const [row] = await db.select({ internalUrl: hosts.internalUrl }).from(hosts).where(eq(hosts.hostId, hostId));
  return row?.internalUrl ?? null;
}

/**
 * A condition on the devices table: the device's host has not written a heartbeat for
 * `silentMs` by the database clock (or never registered, or the device has none).
 */
export function deviceHostSilentFor(silentMs: number): SQL {
  return sql`not exists (select 1 from ${hosts} where ${hosts.hostId} = ${devices.hostId} and ${hosts.heartbeatAt} > now() - make_interval(secs => ${silentMs / 1000}))`;
}
