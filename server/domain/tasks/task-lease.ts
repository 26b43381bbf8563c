import { and, asc, eq, inArray, isNotNull, notInArray, isNull, lt, ne, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, tasks } from '../../../db/schema';
import { dbNow } from '../db-clock';
import { deviceHostSilentFor } from '../hosts/host-registry';
import { Lease } from '../lease';
import { failLostTasks } from './fail-lost-tasks';
import { appendStepInTransaction } from './task-steps';
import type { TaskRow } from './task-resource';

// Tasks are driven under a lease held in PostgreSQL: `lease_owner` is the server
// process (services.instanceId) driving the task, `lease_expires_at` how long its claim
// holds without a heartbeat. Only the service of the device's host claims a task.
const taskLease = new Lease(tasks, { id: tasks.id, owner: tasks.leaseOwner, expiresAt: tasks.leaseExpiresAt });

/** The devices whose browser runs on `hostId`: only that host's pool can drive their tasks. */
function devicesOnHost(db: Db, hostId: string) {
  return db.select({ id: devices.id }).from(devices).where(eq(devices.hostId, hostId));
}

/** The devices whose browser this host's pool runs, each with its browser's incarnation (BrowserHandle.incarnation). */
export type RunningBrowsers = ReadonlyMap<string, string>;

/**
 * Leases up to `limit` running tasks whose device's browser runs on this host
 * (devices.host_id, and `running`: the pool's), and that nobody drives: never claimed, handed over by a stopping
 * service, or whose driver died (its lease ran out: a `driver_lost` step says so). Only this host's pool can drive
 * them, and its browsers outlive a service process, so a task whose driver died
 * continues here on the page it built (the run checks the browser's incarnation, which
 * the task's first claim records: a relaunched browser does not hold the page the task built).
 * `driving`: the tasks `owner` runs right now, never claimed again whatever their lease
 * says. Its heartbeat may be late (a database outage, a loaded machine), and a second
 * claim would start a second run of the task beside the first, under the same owner that
 * every write is fenced by.
 *
 * The claim does not wait for the read of other owners' leases that ran out: it takes
 * what nobody holds (or `owner` held) at once, beside that read, and claims again what
 * the read freed, which is rare.
 */
export async function claimTasks(db: Db, hostId: string, owner: string, leaseMs: number, limit: number, running: RunningBrowsers, driving: readonly string[]): Promise<TaskRow[]> {
  // Only tasks whose browser this host's pool already runs: one still starting (a device
  // being adopted or re-attached) is claimed once it runs, not failed for lack of it.
  if (limit <= 0 || running.size === 0) return [];
  const onThisHost = and(inArray(tasks.deviceId, [...running.keys()]), inArray(tasks.deviceId, devicesOnHost(db, hostId)));
  const claim = (count: number) =>
    taskLease
      .claim(db, {
        owner,
        leaseMs,
        limit: count,
        // Another owner's lease that ran out is claimed only once released with its step.
        due: and(eq(tasks.status, 'running'), onThisHost, or(isNull(tasks.leaseOwner), eq(tasks.leaseOwner, owner)), driving.length === 0 ? undefined : notInArray(tasks.id, [...driving])),
        orderBy: asc(tasks.createdAt),
        set: { attempts: sql`${tasks.attempts} + 1`, updatedAt: dbNow(), browserIncarnation: incarnationOnFirstClaim(running) },
      })
      .returning();
  // A lease that ran out was its driver's last word: the timeline says so before the
  // task continues here (the same step as when a start or an adoption frees it sooner).
  const [freed, claimed] = await Promise.all([releaseLeases(db, and(onThisHost, lt(tasks.leaseExpiresAt, dbNow())), owner), claim(limit)]);
  if (freed.length === 0 || claimed.length >= limit) return claimed;
  return [...claimed, ...(await claim(limit - claimed.length))];
}

/** The incarnation of the task's device's browser, recorded by the task's first claim and kept by every later one. */
function incarnationOnFirstClaim(running: RunningBrowsers): SQL {
  const incarnations = sql.join(
    [...running].map(([deviceId, incarnation]) => sql`when ${deviceId} then ${incarnation}`),
    sql` `,
  );
  return sql`coalesce(${tasks.browserIncarnation}, case ${tasks.deviceId}::text ${incarnations} end)`;
}

/** Written when a stopping service hands a run over (a deploy's SIGTERM). */
const HANDED_OVER_NOTE = 'The service driving the task stopped for a restart after its last step; the task continues on the same page.';
/** Written when a run's service died mid-run (a crash, kill -9, a lost host). */
const DRIVER_LOST_NOTE = 'The service driving the task stopped without handing it over; the task continues on the same page, and an action cut off before it was recorded is carried out again.';

/**
 * A stopping service hands its run over: the task stays `running`, nobody holds it, and
 * the next service of its device's host claims it at once. Only while `owner` holds it;
 * a `handed_over` observation step tells the timeline why the run paused.
 */
export async function handOverTask(db: Db, taskId: string, owner: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [released] = await tx
      .update(tasks)
      .set({ leaseOwner: null, updatedAt: dbNow() })
      .where(and(eq(tasks.id, taskId), eq(tasks.status, 'running'), eq(tasks.leaseOwner, owner)))
      .returning();
    if (released === undefined) return false;
    await appendStepInTransaction(tx, released, { type: 'observation', action: 'handed_over', url: null, title: null, note: HANDED_OVER_NOTE });
    return true;
  });
}

/**
 * Frees the leases of running tasks on `deviceIds` held by a service that died (a
 * `driver_lost` observation step each), for the host that now runs those devices to
 * claim at once rather than wait the leases out. At start, for this host's own devices
 * (one process per data directory, held by a file lock, so the holder is dead), and when
 * a live host adopts a dead host's devices. Returns the ids of the tasks freed.
 */
export function releaseLeasesOfDeadDriver(db: Db, deviceIds: SQLWrapper | string[], exceptOwner: string): Promise<string[]> {
  return releaseLeases(db, inArray(tasks.deviceId, deviceIds), exceptOwner);
}

/** Frees the leases of the running tasks `which` selects that another owner than `exceptOwner` holds, with a `driver_lost` step each. */
async function releaseLeases(db: Db, which: SQL | undefined, exceptOwner: string): Promise<string[]> {
  const held = await db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(eq(tasks.status, 'running'), isNotNull(tasks.leaseOwner), ne(tasks.leaseOwner, exceptOwner), which));
  const freed: string[] = [];
  for (const { id } of held) {
    const released = await db.transaction(async (tx) => {
      const [row] = await tx
        .update(tasks)
        .set({ leaseOwner: null, updatedAt: dbNow() })
        .where(and(eq(tasks.id, id), eq(tasks.status, 'running'), isNotNull(tasks.leaseOwner), ne(tasks.leaseOwner, exceptOwner)))
        .returning();
      if (row === undefined) return false;
      await appendStepInTransaction(tx, row, { type: 'observation', action: 'driver_lost', url: null, title: null, note: DRIVER_LOST_NOTE });
      return true;
    });
    if (released) freed.push(id);
  }
  return freed;
}

/** releaseLeasesOfDeadDriver for every device of this host, at start. */
export function releaseHostLeases(db: Db, hostId: string, owner: string): Promise<string[]> {
  return releaseLeasesOfDeadDriver(db, devicesOnHost(db, hostId), owner);
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

/**
 * A running task nobody drives (its lease ran out or was handed over) that is lost: its
 * device let go of it (its browser died: markDeviceLost cleared the slot, or the device
 * was deleted), or its device's host has been silent for longer than `goneMs`, the time
 * browsers outlive their service, so the browser and the page the task built are gone
 * with that host. A device adopted by another host (browserless) has a live host again.
 */
function lostTask(goneMs: number): SQL {
  return and(
    eq(tasks.status, 'running'),
    or(isNull(tasks.leaseOwner), lt(tasks.leaseExpiresAt, dbNow())),
    or(
      sql`not exists (select 1 from ${devices} where ${devices.id} = ${tasks.deviceId} and ${devices.currentTaskId} = ${tasks.id})`,
      sql`not exists (select 1 from ${devices} where ${devices.id} = ${tasks.deviceId} and not (${deviceHostSilentFor(goneMs)}))`,
    ),
  )!;
}

/**
 * Fails, with device_lost, every running task that is lost (lostTask). Its
 * slot is freed in the same transaction. Any instance may run this; the row lock and the
 * re-check make concurrent sweeps safe.
 *
 * `alive`: the tasks the caller is driving right now, never failed whatever their lease
 * says.
 */
export async function failLostRunningTasks(db: Db, goneMs: number, alive: readonly string[], limit = 100): Promise<string[]> {
  return failLostTasks(db, lostTask(goneMs), { limit, excluding: alive });
}
