import { and, eq, isNotNull, ne } from 'drizzle-orm';
import { devices } from '../../../db/schema';
import { deviceHostSilentFor, HOST_DEAD_MS } from '../hosts/host-registry';
import { systemActor } from '../keys/principal';
import { openActivePeriod } from './metering';
import { lockDevice, transitionDevice, type DeviceDeps } from './device-transitions';

// Devices whose browser outlives their host's machine (a browserless pool: the browser
// runs there, and the dead host's keeper or the pool holds it for a while) are taken over
// by a live host when theirs goes silent: the device row moves here, this host's pool
// joins the browser where it runs, and the device's task continues on its page.

/** An active device of a dead host whose browser another host can join. */
const adoptable = (hostId: string) =>
  and(eq(devices.status, 'active'), ne(devices.hostId, hostId), isNotNull(devices.browserLocation), deviceHostSilentFor(HOST_DEAD_MS))!;

/**
 * Adopts, one transaction each, the devices of hosts silent for HOST_DEAD_MS whose
 * browser runs elsewhere: the row names this host (under its lock, re-checked, so two
 * live hosts never both take one) and the pool joins the browser; the caller then frees
 * the task the dead host drove for this host's runner (releaseLeasesOfDeadDriver). A browser
 * that cannot be joined (its keep-alive ran out) moves the device to `error`, whose task
 * then fails device_lost. Returns the ids adopted.
 */
export async function adoptDevicesOfDeadHosts(deps: DeviceDeps, limit: number): Promise<string[]> {
  if (limit <= 0) return [];
  const candidates = await deps.db.select({ id: devices.id }).from(devices).where(adoptable(deps.hostId)).limit(limit);
  const adopted: string[] = [];
  for (const { id } of candidates) {
    const moved = await deps.db.transaction(async (tx) => {
      const [row] = await tx.select().from(devices).where(and(eq(devices.id, id), adoptable(deps.hostId))).for('update');
      if (row === undefined) return null;
      await tx.update(devices).set({ hostId: deps.hostId }).where(eq(devices.id, row.id));
      return row;
    });
    if (moved === null) continue;
    try {
      await deps.browserPool.launch(moved.id, moved.orgId, { adopt: moved.browserLocation! });
    } catch (error) {
      deps.log.warn({ err: error, deviceId: moved.id }, 'the browser of a dead host\'s device could not be joined; device marked error');
      await deps.db.transaction(async (tx) => {
        const row = await lockDevice(tx, moved.id);
        if (row === null || row.status !== 'active' || row.hostId !== deps.hostId) return;
        await transitionDevice(tx, systemActor(row.orgId), row, 'errored', { reason: 'adoption_failed', host_id: moved.hostId });
      });
      continue;
    }
    // The browser ran on while its host was dead, so the dead host's period runs up to
    // now (openActivePeriod closes it) and this host's starts here.
    await deps.db.transaction(async (tx) => {
      const row = await lockDevice(tx, moved.id);
      if (row !== null && row.status === 'active' && row.hostId === deps.hostId) await openActivePeriod(tx, row, new Date());
    });
    adopted.push(moved.id);
  }
  return adopted;
}
