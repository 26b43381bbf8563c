import type { Db } from '../../../db/client';
import { ApiError } from '../../core/errors';
import type { Actor, Principal } from '../keys/principal';
import { toDeviceResource, type Device } from './device-resource';
import { loadDeviceForCaller } from './load-device';
import { enforceDeviceQuotas } from './quotas';
import { launchBrowser, lockDevice, transitionDevice, setStatusQuietly, type DeviceDeps } from './device-transitions';

// Sleep, wake and delete. Each decides under the device's row lock, commits the new
// state with its audit entry and event, and only then touches the browser, so a
// browser is never stopped for a change that did not commit. The pool serializes the
// browser side: a launch waits for the same device's close to finish.

export async function getDevice(db: Db, principal: Principal, id: string): Promise<Device> {
  return toDeviceResource(await loadDeviceForCaller(db, principal, id));
}

/**
 * POST /v1/devices/{id}/sleep. A device holding a task is 409 device_busy; a device
 * still starting (`creating`, `waking`) is 409 device_not_ready; asleep already is a
 * no-op; `active` and `error` go to `sleeping` and the browser closes, keeping its
 * profile (cookies, storage) for the next wake.
 */
export async function sleepDevice(deps: DeviceDeps, principal: Principal, actor: Actor, id: string): Promise<Device> {
  const row = await deps.db.transaction(async (tx) => {
    const device = await loadDeviceForCaller(tx, principal, id, { forUpdate: true });
    if (device.status === 'terminated') throw new ApiError('device_terminated');
    if (device.currentTaskId !== null) throw new ApiError('device_busy');
    if (device.cdpSessionId !== null) throw new ApiError('device_busy', { message: 'A CDP connection holds the device.' });
    if (device.status === 'creating' || device.status === 'waking') throw new ApiError('device_not_ready');
    if (device.status === 'sleeping') return device;
    return transitionDevice(tx, actor, device, 'slept', { reason: 'requested' });
  });
  await deps.browserPool.close(row.id);
  return toDeviceResource(row);
}

/**
 * POST /v1/devices/{id}/wake, from any state but `terminated` (410) and `creating` (409
 * device_not_ready, for the second its create takes). Quotas apply (the
 * device itself already counts toward the device count). An active device whose
 * browser runs is answered as it is; otherwise the device goes `waking`, its browser
 * starts on its profile, and it becomes `active`. A failed start puts it back where it
 * was and answers 503 capacity_exhausted (or 500).
 */
export async function wakeDevice(deps: DeviceDeps, principal: Principal, actor: Actor, id: string): Promise<Device> {
  const started = await deps.db.transaction(async (tx) => {
    const device = await loadDeviceForCaller(tx, principal, id, { forUpdate: true });
    if (device.status === 'terminated') throw new ApiError('device_terminated');
    // Its create is still launching the browser and answers with the active device.
    if (device.status === 'creating') throw new ApiError('device_not_ready');
    await enforceDeviceQuotas(tx, device.orgId, new Date(), device.id);
    if (device.status === 'active' && deps.browserPool.get(device.id) !== undefined) return { device, previous: null };
    return { device: await setStatusQuietly(tx, device.id, 'waking', deps.hostId), previous: device.status };
  });
  if (started.previous === null) return toDeviceResource(started.device);

  try {
    await launchBrowser(deps, started.device);
  } catch (error) {
    await deps.db.transaction(async (tx) => {
      const row = await lockDevice(tx, started.device.id);
      // A wake that found the device already `waking` (an earlier wake died) leaves it asleep.
      if (row?.status === 'waking') await setStatusQuietly(tx, row.id, started.previous === 'waking' ? 'sleeping' : started.previous!);
    });
    throw error;
  }

  const settled = await deps.db.transaction(async (tx) => {
    const row = await lockDevice(tx, started.device.id);
    if (row === null) throw new ApiError('device_not_found');
    // A concurrent wake finished first, or a delete won while the browser started.
    if (row.status !== 'waking') return row;
    return transitionDevice(tx, actor, row, 'woke', { from_status: started.previous });
  });
  if (settled.status === 'terminated') throw new ApiError('device_terminated');
  return toDeviceResource(settled);
}

/**
 * DELETE /v1/devices/{id}: `terminated` from any other state (a second delete is 410),
 * the open metering period closed (final duration accrued), the task slot cleared (the
 * task worker fails the task with device_lost). Answered once that is committed: the
 * browser's close and its profile's removal (a few hundred milliseconds) go on after the
 * answer. Nothing can use the device meanwhile (its row says terminated, its slot in the
 * pool is gone), and a process that dies before they end leaves a kept browser and a
 * profile of a terminated device, which its next start removes (reconcileHostDevices).
 */
export async function deleteDevice(deps: DeviceDeps, principal: Principal, actor: Actor, id: string): Promise<Device> {
  const row = await deps.db.transaction(async (tx) => {
    const device = await loadDeviceForCaller(tx, principal, id, { forUpdate: true });
    if (device.status === 'terminated') throw new ApiError('device_terminated');
    return transitionDevice(tx, actor, device, 'terminated', { task_id_cleared: device.currentTaskId });
  });
  deps.browserPool.destroy(row.id).catch((error: unknown) => deps.log.warn({ err: error, deviceId: row.id }, 'a deleted device\'s browser or profile was not removed; the next start removes it'));
  return toDeviceResource(row);
}
