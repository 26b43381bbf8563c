import { and, count, eq, ne, sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { devices, organizations } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { deviceSecondsInWindow } from './metering';

/**
 * Serializes device-count decisions of one organization until the transaction ends, so
 * concurrent creates cannot all see room for "one more" (count + insert is race-free).
 */
export async function lockOrganizationDevices(tx: Tx, orgId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`devices:${orgId}`}, 0))`);
}

/**
 * The organization's quotas, in the order the contract names them: non-terminated
 * device count (403 device_quota_exceeded), then rolling 24 h device-seconds (403
 * duration_quota_exceeded). `deviceId` is the device being woken, already counted.
 */
export async function enforceDeviceQuotas(tx: Tx, orgId: string, now: Date, deviceId?: string): Promise<void> {
  const [org] = await tx
    .select({ maxDevices: organizations.maxDevices, maxDeviceSeconds: organizations.maxDeviceSeconds })
    .from(organizations)
    .where(eq(organizations.id, orgId));
  if (org === undefined) throw new ApiError('device_not_found');
  if (org.maxDevices !== null) {
    const [live] = await tx
      .select({ n: count() })
      .from(devices)
      .where(and(eq(devices.orgId, orgId), ne(devices.status, 'terminated'), deviceId === undefined ? undefined : ne(devices.id, deviceId)));
    if ((live?.n ?? 0) + 1 > org.maxDevices) throw new ApiError('device_quota_exceeded');
  }
  if (org.maxDeviceSeconds !== null && (await deviceSecondsInWindow(tx, orgId, now)) >= org.maxDeviceSeconds) {
    throw new ApiError('duration_quota_exceeded');
  }
}
