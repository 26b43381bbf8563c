import { and, eq, inArray, isNull, lt, ne, sql } from 'drizzle-orm';
import { devices } from '../../../db/schema';
import { dbNowPlus } from '../db-clock';
import { systemActor } from '../keys/principal';
import { closeHostPeriods, heartbeatActivePeriods, openActivePeriod, timestampParam } from './metering';
import { lockDevice, transitionDevice, type DeviceDeps } from './device-transitions';

// The service's own device moves: a lost browser, idle suspend, metering heartbeats and
// the start-up reconciliation of this host's devices. Audited as `system`.

/**
 * A browser died without being closed (crash, kill -9): an active device goes to
 * `error`, its task slot is cleared (the task worker fails the task with device_lost)
 * and its metering period ends. Wake recovers it.
 */
export async function markDeviceLost(deps: DeviceDeps, deviceId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const row = await lockDevice(tx, deviceId);
    if (row === null || row.status !== 'active' || row.hostId !== deps.hostId) return;
    await transitionDevice(tx, systemActor(row.orgId), row, 'errored', { reason: 'browser_lost', task_id_cleared: row.currentTaskId });
  });
}

/**
 * Records which browser now runs the device here: its incarnation (parked tasks built on
 * another one have lost their page) and where another host could join it. Only while the
 * device is this host's.
 */
export async function recordDeviceBrowser(deps: Pick<DeviceDeps, 'db' | 'hostId'>, deviceId: string, browser: { incarnation: string; location: string | null }): Promise<void> {
  await deps.db
    .update(devices)
    .set({ browserIncarnation: browser.incarnation, browserLocation: browser.location })
    .where(and(eq(devices.id, deviceId), eq(devices.hostId, deps.hostId)));
}

/**
 * Writes down what this host's browsers tell of their devices: a browser that dies on its
 * own puts its device in `error` (within the time its disconnect takes to surface:
 * immediate for a local process), and each launch records which browser runs the device
 * (parked tasks know by it whether their page survived). A write waits out a database
 * outage (`retry`): it must not be lost. Returns what waits for the writes in flight, for
 * a stop to call before the database closes.
 */
export function recordBrowserEvents(deps: DeviceDeps, retry: (write: () => Promise<void>) => Promise<void>): () => Promise<void> {
  const writes = new Set<Promise<void>>();
  const track = (deviceId: string, write: () => Promise<void>, failure: string) => {
    const tracked = retry(write)
      .catch((error: unknown) => deps.log.error({ err: error, deviceId }, failure))
      .finally(() => writes.delete(tracked));
    writes.add(tracked);
  };
  deps.browserPool.onDeviceLost((deviceId) => track(deviceId, () => markDeviceLost(deps, deviceId), 'could not mark a lost device'));
  deps.browserPool.onDeviceLaunched((deviceId, handle) => track(deviceId, () => recordDeviceBrowser(deps, deviceId, handle), "could not record a device's browser"));
  return async () => void (await Promise.all(writes));
}

/**
 * Puts to sleep this host's active devices that hold no task and were not active for
 * their idle_suspend_secs (tasks and sessions bump last_active_at while they run); an
 * open CDP connection keeps its device awake.
 */
export async function suspendIdleDevices(deps: DeviceDeps, now = new Date()): Promise<number> {
  const idle = and(
    eq(devices.hostId, deps.hostId),
    eq(devices.status, 'active'),
    isNull(devices.currentTaskId),
    // A device a customer drives over CDP is in use, whatever its last_active_at says.
    isNull(devices.cdpSessionId),
    lt(devices.lastActiveAt, sql`${timestampParam(now)} - make_interval(secs => ${devices.idleSuspendSecs})`),
  );
  const candidates = await deps.db.select({ id: devices.id }).from(devices).where(idle);
  let suspended = 0;
  for (const { id } of candidates) {
    // Re-checked under the row lock: a task may have claimed the slot meanwhile.
    const slept = await deps.db.transaction(async (tx) => {
      const [row] = await tx.select().from(devices).where(and(eq(devices.id, id), idle)).for('update');
      if (row === undefined) return false;
      await transitionDevice(tx, systemActor(row.orgId), row, 'slept', { reason: 'idle', idle_suspend_secs: row.idleSuspendSecs });
      return true;
    });
    if (slept) {
      await deps.browserPool.close(id);
      suspended += 1;
    }
  }
  return suspended;
}

export async function heartbeatDevices(deps: DeviceDeps): Promise<void> {
  await heartbeatActivePeriods(deps.db, deps.hostId, new Date());
}

/**
 * Crash safety at start, before the API serves (the provider's start already killed
 * Chromium a previous run left without a keeper): close this host's stale metering
 * periods at their last heartbeat, close the kept browsers of devices that are no longer
 * this host's running ones (slept, deleted, moved), remove the profiles of deleted
 * devices (a delete answers before its profile is gone), then bring back every device this
 * host was running (`active`, or caught mid `creating`/`waking`): re-attached to its kept
 * browser, or relaunched on its profile, it is `active` again with a new period; a
 * device whose browser will not start goes to `error`.
 */
export async function reconcileHostDevices(deps: DeviceDeps): Promise<void> {
  await closeHostPeriods(deps.db, deps.hostId, null);
  const running = await deps.db
    .select()
    .from(devices)
    .where(and(eq(devices.hostId, deps.hostId), inArray(devices.status, ['active', 'creating', 'waking'])));
  const runningIds = new Set(running.map((device) => device.id));
  const strays = (await deps.browserPool.keptDeviceIds()).filter((deviceId) => !runningIds.has(deviceId));
  await Promise.all(strays.map((deviceId) => deps.browserPool.closeKept(deviceId)));
  await removeProfilesOfDeletedDevices(deps);
  await Promise.all(
    running.map(async (device) => {
      let launched = true;
      try {
        await deps.browserPool.launch(device.id, device.orgId);
      } catch (error) {
        deps.log.warn({ err: error, deviceId: device.id }, 'device browser did not restart; device marked error');
        launched = false;
      }
      await deps.db.transaction(async (tx) => {
        const row = await lockDevice(tx, device.id);
        if (row === null || row.status !== device.status) return;
        const actor = systemActor(row.orgId);
        if (!launched) {
          await transitionDevice(tx, actor, row, 'errored', { reason: 'restart_failed' });
        } else if (row.status === 'active') {
          // Same status, same (kept) or new browser: no event, only a new metering period.
          await openActivePeriod(tx, row, new Date());
        } else {
          await transitionDevice(tx, actor, row, row.status === 'creating' ? 'created' : 'woke', { reason: 'restart' });
        }
      });
    }),
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Removes what the provider keeps for devices that are terminated or unknown: a delete
 * answers once the device is terminated and removes the profile after, so a process
 * that died in between left it. Run at start only, before anything launches: a create
 * in progress has a profile and no committed row yet.
 */
async function removeProfilesOfDeletedDevices(deps: DeviceDeps): Promise<void> {
  const kept = (await deps.browserPool.profileIds()).filter((id) => UUID.test(id));
  if (kept.length === 0) return;
  const rows = await deps.db.select({ id: devices.id }).from(devices).where(and(inArray(devices.id, kept), ne(devices.status, 'terminated')));
  const live = new Set(rows.map((row) => row.id));
  await Promise.all(kept.filter((id) => !live.has(id)).map((id) => deps.browserPool.destroy(id)));
}

/**
 * Longest a create may stay `creating` on another host before it counts as abandoned: a
 * launch takes seconds, and a host that restarts finishes or fails its own creates when
 * it reconciles, so only a host that never came back leaves one this old.
 */
export const ABANDONED_CREATE_MS = 5 * 60 * 1000;

/**
 * Moves to `error` the devices another host left `creating` longer than
 * ABANDONED_CREATE_MS ago, so they stop counting against the device quota as if alive
 * and can be woken (here) or deleted. Returns how many moved.
 */
export async function failAbandonedCreates(deps: DeviceDeps): Promise<number> {
  const abandoned = and(
    eq(devices.status, 'creating'),
    ne(devices.hostId, deps.hostId),
    lt(devices.statusChangedAt, dbNowPlus(-ABANDONED_CREATE_MS)),
  );
  const candidates = await deps.db.select({ id: devices.id }).from(devices).where(abandoned);
  let failed = 0;
  for (const { id } of candidates) {
    const moved = await deps.db.transaction(async (tx) => {
      const [row] = await tx.select().from(devices).where(and(eq(devices.id, id), abandoned)).for('update');
      if (row === undefined) return false;
      await transitionDevice(tx, systemActor(row.orgId), row, 'errored', { reason: 'create_abandoned', host_id: row.hostId });
      return true;
    });
    if (moved) failed += 1;
  }
  return failed;
}

/**
 * Closes the browsers this process runs for devices the database no longer places here:
 * another instance deleted (profile removed too), slept or errored the device, or it
 * moved to another host. An instance can only close its own browsers, so each one
 * reconciles its pool against the shared rows. Returns how many it closed.
 */
export async function closeStrayBrowsers(deps: DeviceDeps): Promise<number> {
  const running = deps.browserPool.runningDeviceIds();
  if (running.length === 0) return 0;
  const rows = await deps.db.select({ id: devices.id, status: devices.status, hostId: devices.hostId }).from(devices).where(inArray(devices.id, running));
  const isLive = (row: { status: string }) => ['active', 'creating', 'waking'].includes(row.status);
  const placedHere = new Set(rows.filter((row) => row.hostId === deps.hostId && isLive(row)).map((row) => row.id));
  // Live on another host: that host adopted it (this one looked dead) and may have joined its browser.
  const movedAway = new Set(rows.filter((row) => row.hostId !== deps.hostId && isLive(row)).map((row) => row.id));
  const terminated = new Set(rows.filter((row) => row.status === 'terminated').map((row) => row.id));
  const known = new Set(rows.map((row) => row.id));
  const strays = running.filter((id) => !placedHere.has(id));
  await Promise.all(
    strays.map((id) => {
      if (terminated.has(id) || !known.has(id)) return deps.browserPool.destroy(id);
      if (movedAway.has(id)) return deps.browserPool.handOff(id);
      return deps.browserPool.close(id);
    }),
  );
  return strays.length;
}

/** Graceful shutdown: this host's browsers stop now, so their periods end now. */
export async function closeHostMetering(deps: DeviceDeps): Promise<void> {
  await closeHostPeriods(deps.db, deps.hostId, new Date());
}
