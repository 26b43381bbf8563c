import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { deviceStates } from '../../../db/schema';
import type { DeviceState, DeviceStateStore } from '../../browser';

/**
 * Devices' saved browser state (cookies, localStorage) in PostgreSQL, for the browserless
 * provider: one row per device, replaced at every save, so whichever instance launches
 * the device next restores what the last one saved. The row goes with the device's
 * deletion (and with the device row itself, by the foreign key).
 */
export function deviceStateStore(db: Db): DeviceStateStore {
  return {
    async load(deviceId: string): Promise<unknown> {
      const [row] = await db.select({ state: deviceStates.state }).from(deviceStates).where(eq(deviceStates.deviceId, deviceId));
      return row?.state ?? null;
    },
    async save(deviceId: string, state: DeviceState): Promise<void> {
      const savedAt = new Date();
      await db
        .insert(deviceStates)
        .values({ deviceId, state, savedAt })
        .onConflictDoUpdate({ target: deviceStates.deviceId, set: { state, savedAt } });
    },
    async remove(deviceId: string): Promise<void> {
      await db.delete(deviceStates).where(eq(deviceStates.deviceId, deviceId));
    },
    async deviceIds(): Promise<string[]> {
      return (await db.select({ deviceId: deviceStates.deviceId }).from(deviceStates)).map((row) => row.deviceId);
    },
  };
}
