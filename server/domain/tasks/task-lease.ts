import { and, asc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, tasks } from '../../../db/schema';
import { dbNow, dbNowPlus } from '../db-clock';
import { Lease } from '../lease';
import { failLostTasks } from './fail-lost-tasks';
import type { TaskRow } from './task-resource';

// Tasks are driven under a lease held in PostgreSQL: `lease_owner` is the server
// process (services.instanceId) driving the task, `lease_expires_at` how long its claim
// holds without a heartbeat. A running task nobody holds carries a start deadline in
// `lease_expires_at` instead (set on submit and on resume).
const taskLease = new Lease(tasks, { id: tasks.id, owner: tasks.leaseOwner, expiresAt: tasks.leaseExpiresAt });

/** The devices whose browser runs on `hostId`: only that host's pool can drive their tasks. */
function devicesOnHost(db: Db, hostId: string) {
  return db.select({ id: devices.id }).from(devices).where(eq(devices.hostId, hostId));
}

/**
 * Leases up to `limit` running, unleased tasks whose device's browser runs on this host
 * (devices.host_id): only this host's pool can drive them. A task whose lease ran out is
 * never taken over: the page state its run depended on died with that run, so the sweep
 * fails it instead (failExpiredLeases).
 */
export async function claimTasks(db: Db, hostId: string, owner: string, leaseMs: number, limit: number): Promise<TaskRow[]> {
  if (limit <= 0) return [];
  return taskLease
    .claim(db, {
      owner,
      leaseMs,
      limit,
      due: and(eq(tasks.status, 'running'), isNull(tasks.leaseOwner), inArray(tasks.deviceId, devicesOnHost(db, hostId))),
      orderBy: asc(tasks.createdAt),
      set: { attempts: sql`${tasks.attempts} + 1`, updatedAt: dbNow() },
    })
    .returning();
}

/**
 * Keeps the start deadline of this host's waiting tasks (running, not yet leased because
 * every run slot is busy) ahead of the sweep: a live host's queue is never mistaken for
 * a dead host's.
 */
export async function extendStartDeadlines(db: Db, hostId: string, leaseMs: number): Promise<void> {
  await db
    .update(tasks)
    .set({ leaseExpiresAt: dbNowPlus(leaseMs) })
    .where(and(eq(tasks.status, 'running'), isNull(tasks.leaseOwner), inArray(tasks.deviceId, devicesOnHost(db, hostId))));
}

export interface LeaseState {
  /** The task is still running under this owner's lease (now extended). */
  held: boolean;
  /** The device's slot still points at the task; false once the device died or was deleted. */
  deviceHeld: boolean;
}

/**
 * The heartbeat: extends the lease while the task is still running under `owner`, and
 * marks the device active (idle suspend reads last_active_at). It also reports changes
 * made elsewhere, which the worker acts on even if a notification was missed.
 */
export async function renewLease(db: Db, task: TaskRow, owner: string, leaseMs: number): Promise<LeaseState> {
  return db.transaction(async (tx) => {
    const held = await taskLease.renew(tx, task.id, owner, leaseMs, eq(tasks.status, 'running'));
    const device = await tx
      .update(devices)
      .set({ lastActiveAt: dbNow() })
      .where(and(eq(devices.id, task.deviceId), eq(devices.currentTaskId, task.id)))
      .returning({ id: devices.id });
    return { held, deviceHeld: device.length > 0 };
  });
}

const expiredLease = and(eq(tasks.status, 'running'), lt(tasks.leaseExpiresAt, dbNow()))!;

/**
 * Fails, with device_lost, every running task whose lease (or start deadline) passed:
 * the process driving it died (kill -9, a lost machine) or the device's host never
 * picked it up, and the page state the run depended on died with that browser, so the
 * task cannot be resumed faithfully. Its slot is freed in the same transaction. Any
 * instance may run this; the row lock and the re-check make concurrent sweeps safe.
 *
 * `alive`: the tasks the caller is driving right now, never failed whatever their lease
 * says.
 */
export async function failExpiredLeases(db: Db, alive: readonly string[], limit = 100): Promise<string[]> {
  return failLostTasks(db, expiredLease, { limit, excluding: alive });
}
