import { eq } from 'drizzle-orm';
import type { Db, Tx } from '../../../db/client';
import { devices, type DeviceStatus } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { CapacityExhaustedError, DataDirectoryFullError, type BrowserPool } from '../../browser';
import { recordAudit } from '../audit/record-audit';
import { emitEvent } from '../events/emit-event';
import type { Actor } from '../keys/principal';
import { toDeviceResource, type DeviceRow } from './device-resource';
import { closeActivePeriod, openActivePeriod } from './metering';

/** What device operations need from the composition root (a subset of Services). */
export interface DeviceDeps {
  db: Db;
  browserPool: BrowserPool;
  /** This host's id (see host-id.ts): the devices whose browsers run here. */
  hostId: string;
  config: { regions: readonly string[] };
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

const EVENT_BY_TRANSITION = {
  created: 'operator.device.created.v1',
  slept: 'operator.device.slept.v1',
  woke: 'operator.device.woke.v1',
  terminated: 'operator.device.terminated.v1',
  errored: 'operator.device.errored.v1',
} as const;

export type DeviceTransition = keyof typeof EVENT_BY_TRANSITION;

const STATUS_BY_TRANSITION = {
  created: 'active',
  slept: 'sleeping',
  woke: 'active',
  terminated: 'terminated',
  errored: 'error',
} as const satisfies Record<DeviceTransition, DeviceStatus>;

/**
 * Applies one state change of a device row the caller holds locked: the status, the
 * metering period (opened on entering `active`, closed on leaving it), the task slot
 * (cleared when the browser goes away), then the audit entry and the outbox event, all
 * in the caller's transaction.
 *
 * The lock makes the row after the change known without reading it back, so the four
 * writes go to PostgreSQL together (postgres.js pipelines a transaction's statements that
 * are sent before the first answers) instead of one round trip each: on a host whose
 * cores Chromium keeps busy, every round trip waits for a core twice. A DELETE's
 * transaction is then BEGIN, the lock, the writes and COMMIT.
 */
export async function transitionDevice(tx: Tx, actor: Actor, row: DeviceRow, transition: DeviceTransition, details: Record<string, unknown> = {}): Promise<DeviceRow> {
  const now = new Date();
  const status = STATUS_BY_TRANSITION[transition];
  const browserGone = transition === 'terminated' || transition === 'errored';
  const changes = {
    status,
    statusChangedAt: now,
    ...(status === 'active' ? { lastActiveAt: now } : {}),
    ...(browserGone ? { currentTaskId: null } : {}),
  };
  const device: DeviceRow = { ...row, ...changes };
  const resource = toDeviceResource(device);
  await Promise.all([
    status === 'active' ? openActivePeriod(tx, row, now) : closeActivePeriod(tx, row.id, now),
    tx.update(devices).set(changes).where(eq(devices.id, row.id)).execute(),
    recordAudit(tx, actor, {
      action: `operator.device.${transition}`,
      resourceType: 'device',
      resourceId: resource.id,
      spaceId: device.spaceId,
      details: { from: row.status, to: status, ...details },
    }),
    emitEvent(tx, { orgId: device.orgId, spaceId: device.spaceId, type: EVENT_BY_TRANSITION[transition], resource }),
  ]);
  return device;
}

/**
 * Changes the status without event or metering: the transient `waking`, and putting a
 * device back where it was when its browser failed to start.
 */
export async function setStatusQuietly(tx: Tx, deviceId: string, status: DeviceStatus, hostId?: string): Promise<DeviceRow> {
  const [updated] = await tx
    .update(devices)
    .set({ status, statusChangedAt: new Date(), ...(hostId === undefined ? {} : { hostId }) })
    .where(eq(devices.id, deviceId))
    .returning();
  return updated!;
}

/** Locks and re-reads a device row inside a transaction (null when it vanished). */
export async function lockDevice(tx: Tx, deviceId: string): Promise<DeviceRow | null> {
  const [row] = await tx.select().from(devices).where(eq(devices.id, deviceId)).for('update');
  return row ?? null;
}

/**
 * Starts the device's browser, turning pool failures into API errors: no free slot, or no
 * room on the data directory's disk, is 503 capacity_exhausted with Retry-After (the
 * second is logged: an operator must free space); a browser that would not start is a
 * 500 whose cause is logged, never shown.
 */
export async function launchBrowser(deps: DeviceDeps, row: DeviceRow): Promise<void> {
  try {
    await deps.browserPool.launch(row.id, row.orgId);
  } catch (error) {
    if (error instanceof DataDirectoryFullError) deps.log.error({ deviceId: row.id, freeBytes: error.freeBytes }, "no browser can start: the data directory's disk is full");
    if (error instanceof CapacityExhaustedError) {
      throw new ApiError('capacity_exhausted', { headers: { 'Retry-After': String(error.retryAfterSeconds) } });
    }
    deps.log.error({ err: error, deviceId: row.id }, 'device browser failed to start');
    throw new ApiError('internal_error', { cause: error });
  }
}
