import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices } from '../../../db/schema';

/** The host whose browser runs the device, or null when no host has it (or the device is gone). */
export async function deviceHostId(db: Db, deviceId: string): Promise<string | null> {
  const [device] = await db.select({ hostId: devices.hostId }).from(devices).where(eq(devices.id, deviceId));
  return device?.hostId ?? null;
}
