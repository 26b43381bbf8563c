import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { devices } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { withIdempotency } from '../idempotency/with-idempotency';
import type { Actor, Principal } from '../keys/principal';
import { resolveRequestedSpace } from '../spaces/resolve-space';
import { toDeviceResource, type Device, type DeviceRow } from './device-resource';
import { enforceDeviceQuotas, lockOrganizationDevices } from './quotas';
import { launchBrowser, lockDevice, transitionDevice, type DeviceDeps } from './device-transitions';

export const MIN_IDLE_SUSPEND_SECS = 60;
export const MAX_IDLE_SUSPEND_SECS = 86_400;
export const DEFAULT_IDLE_SUSPEND_SECS = 900;

/** Body of POST /v1/devices; every field optional (CONTRACT.md "Device fields"). */
export const CreateDeviceBodySchema = z.strictObject({
  name: z.string().min(1).max(100).optional(),
  region: z.string().min(1).max(100).optional(),
  idle_suspend_secs: z.number().int().min(MIN_IDLE_SUSPEND_SECS).max(MAX_IDLE_SUSPEND_SECS).optional(),
  space_id: z.string().max(100).optional(),
});
export type CreateDeviceBody = z.infer<typeof CreateDeviceBodySchema>;

/**
 * POST /v1/devices. Order (spec): the write gate ran before; then the Space, then the
 * quotas (under a per-organization lock, so concurrent creates cannot overshoot), then
 * the browser is provisioned. The row is committed as `creating` before the launch so
 * the quota lock is not held for the second a browser takes to start; a failed launch
 * removes the row again, leaving no trace but the error. With a warm browser ready
 * (server/browser/warm-browsers.ts) the launch is a hand-over of a running browser.
 */
export async function createDevice(
  deps: DeviceDeps,
  principal: Principal,
  actor: Actor,
  body: CreateDeviceBody,
  idempotencyKey: string | string[] | undefined,
): Promise<Device> {
  // Node joins a repeated custom header into one string; the array form is only typed.
  const key = Array.isArray(idempotencyKey) ? idempotencyKey.join(', ') : idempotencyKey;
  return withIdempotency(deps.db, { orgId: principal.orgId, route: 'POST /v1/devices', key, request: body }, async () => {
    const region = body.region ?? deps.config.regions[0] ?? 'local';
    if (!deps.config.regions.includes(region)) {
      throw new ApiError('invalid_request', { param: 'region', message: 'The region is not one of the configured regions.' });
    }
    const spaceId = await resolveCreateSpace(deps, principal, body.space_id);

    // A warm browser, when one is ready, is taken once the quotas allow the device; its
    // profile's name is the new device's id. If the transaction fails it is closed and its
    // profile removed: it never goes back to the pool.
    let warmId: string | null = null;
    let creating: DeviceRow;
    try {
      creating = await deps.db.transaction(async (tx) => {
        await lockOrganizationDevices(tx, principal.orgId);
        await enforceDeviceQuotas(tx, principal.orgId, new Date());
        warmId = deps.browserPool.takeWarm(principal.orgId);
        const [row] = await tx
          .insert(devices)
          .values({
            ...(warmId === null ? {} : { id: warmId }),
            orgId: principal.orgId,
            spaceId,
            name: body.name ?? `device-${randomBytes(2).toString('hex')}`,
            region,
            status: 'creating',
            idleSuspendSecs: body.idle_suspend_secs ?? DEFAULT_IDLE_SUSPEND_SECS,
            hostId: deps.hostId,
          })
          .returning();
        return row!;
      });
    } catch (error) {
      if (warmId !== null) await deps.browserPool.destroy(warmId);
      throw error;
    }

    try {
      await launchBrowser(deps, creating);
    } catch (error) {
      await deps.db.delete(devices).where(and(eq(devices.id, creating.id), eq(devices.status, 'creating')));
      throw error;
    }

    const settled = await deps.db.transaction(async (tx) => {
      const row = await lockDevice(tx, creating.id);
      // Deleted while its browser was starting: the delete already won.
      if (row === null || row.status !== 'creating') return row;
      return transitionDevice(tx, actor, row, 'created', { name: row.name, region: row.region });
    });
    if (settled === null || settled.status === 'terminated') {
      await deps.browserPool.destroy(creating.id);
      throw new ApiError('device_terminated');
    }
    return toDeviceResource(settled);
  });
}

/**
 * The Space a new device goes to (CONTRACT.md): a key holding exactly one Space may omit
 * it; otherwise it is required (400). Unknown or another organization's Space is 400;
 * a Space of the organization that the key does not hold is 403.
 */
async function resolveCreateSpace(deps: DeviceDeps, principal: Principal, requested: string | undefined): Promise<string> {
  if (requested === undefined) {
    if (principal.spaceIds.length === 1) return principal.spaceIds[0]!;
    throw new ApiError('invalid_request', { param: 'space_id', message: 'space_id is required unless the key holds exactly one Space.' });
  }
  return resolveRequestedSpace(deps.db, principal, requested);
}
