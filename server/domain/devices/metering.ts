import { and, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../../db/client';
import { deviceActivePeriods, devices } from '../../../db/schema';

// Device time is metered as periods of `active` status. A period opens when a device
// becomes active and closes when it leaves `active`; while it is open the heartbeat
// worker stamps heartbeat_at every sweep. After a crash, the open periods of this host
// are closed at their last heartbeat, so at most one sweep interval of real activity is
// lost and nothing is counted twice (periods of one device never overlap).

export const DAY_MS = 24 * 60 * 60 * 1000;

/** A timestamp parameter inside raw SQL (postgres.js binds Date only through drizzle columns). */
export function timestampParam(date: Date): SQL {
  return sql`${date.toISOString()}::timestamptz`;
}

export async function openActivePeriod(tx: DbOrTx, device: { id: string; orgId: string }, at: Date): Promise<void> {
  // A device has at most one open period; closing first makes re-activation idempotent.
  await closeActivePeriod(tx, device.id, at);
  await tx.insert(deviceActivePeriods).values({ deviceId: device.id, orgId: device.orgId, startedAt: at, heartbeatAt: at });
}

export async function closeActivePeriod(tx: DbOrTx, deviceId: string, at: Date): Promise<void> {
  await tx
    .update(deviceActivePeriods)
    .set({ endedAt: sql`greatest(${deviceActivePeriods.startedAt}, ${timestampParam(at)})`, heartbeatAt: sql`greatest(${deviceActivePeriods.heartbeatAt}, ${timestampParam(at)})` })
    .where(and(eq(deviceActivePeriods.deviceId, deviceId), isNull(deviceActivePeriods.endedAt)));
}

/** Stamps the open periods of this host's active devices: the crash-safety bound. */
export async function heartbeatActivePeriods(db: DbOrTx, hostId: string, at: Date): Promise<void> {
  await db
    .update(deviceActivePeriods)
    .set({ heartbeatAt: at })
    .where(
      and(
        isNull(deviceActivePeriods.endedAt),
        inArray(
          deviceActivePeriods.deviceId,
          db.select({ id: devices.id }).from(devices).where(and(eq(devices.hostId, hostId), eq(devices.status, 'active'))),
        ),
      ),
    );
}

/**
 * Closes every open period of this host's devices, at their last heartbeat (`at` null,
 * after a crash) or at `at` (a graceful shutdown, when the browsers stop now).
 */
export async function closeHostPeriods(db: DbOrTx, hostId: string, at: Date | null): Promise<void> {
  await db
    .update(deviceActivePeriods)
    .set({ endedAt: at === null ? deviceActivePeriods.heartbeatAt : sql`greatest(${deviceActivePeriods.startedAt}, ${timestampParam(at)})` })
    .where(
      and(
        isNull(deviceActivePeriods.endedAt),
        inArray(deviceActivePeriods.deviceId, db.select({ id: devices.id }).from(devices).where(eq(devices.hostId, hostId))),
      ),
    );
}

/**
 * Device-seconds of the organization inside the rolling 24 h window ending at `now`:
 * each period clipped to the window, open periods counted up to `now`.
 */
export async function deviceSecondsInWindow(db: DbOrTx, orgId: string, now: Date): Promise<number> {
  const windowStart = new Date(now.getTime() - DAY_MS);
  const [row] = await db
    .select({
      seconds: sql<string>`coalesce(sum(greatest(0, extract(epoch from (
        least(coalesce(${deviceActivePeriods.endedAt}, ${timestampParam(now)}), ${timestampParam(now)}) - greatest(${deviceActivePeriods.startedAt}, ${timestampParam(windowStart)})
      )))), 0)`,
    })
    .from(deviceActivePeriods)
    .where(
      and(
        eq(deviceActivePeriods.orgId, orgId),
        sql`(${deviceActivePeriods.endedAt} is null or ${deviceActivePeriods.endedAt} > ${timestampParam(windowStart)})`,
      ),
    );
  return Math.floor(Number(row?.seconds ?? 0));
}
