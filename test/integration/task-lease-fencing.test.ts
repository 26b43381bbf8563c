import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { applyMigrations } from '../../db/migrate';
import { devices, hosts, tasks } from '../../db/schema';
import { heartbeatHost, registerHost } from '../../server/domain/hosts/host-registry';
import {
  claimTasks,
  failLostRunningTasks,
  handOverTask,
  releaseHostLeases,
  renewLease,
} from '../../server/domain/tasks/task-lease';
import { appendStep } from '../../server/domain/tasks/task-steps';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

// Two services never drive one task at once: the lease decides who may, every write of a
// run is fenced by it, and a task is failed for its host only once that host is gone for
// good, never because a live host's lease ran out.

let testDb: TestDatabase;
let database: Database;

const LEASE_MS = 300;
const HOST = 'host-a';

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = connectDatabase(testDb.url, 4);
  await applyMigrations(database);
  await registerHost(database.db, HOST, 'http://127.0.0.1:1');
});
afterAll(async () => {
  await database?.close();
  await testDb?.drop();
});

async function runningTask(hostId = HOST): Promise<{ id: string; deviceId: string; orgId: string }> {
  const orgId = randomUUID();
  const [device] = await database.db
    .insert(devices)
    .values({ orgId, spaceId: randomUUID(), name: 'd', region: 'local', status: 'active', idleSuspendSecs: 900, hostId })
    .returning();
  const [task] = await database.db
    .insert(tasks)
    .values({ orgId, spaceId: device!.spaceId, deviceId: device!.id, status: 'running', prompt: 'p', deadlineAt: new Date(Date.now() + 600_000) })
    .returning();
  await database.db.update(devices).set({ currentTaskId: task!.id }).where(eq(devices.id, device!.id));
  return { id: task!.id, deviceId: device!.id, orgId };
}

async function taskRow(id: string) {
  const [row] = await database.db.select().from(tasks).where(eq(tasks.id, id));
  return row!;
}

/** The host's pool running `deviceId`'s browser, of `incarnation`. */
const running = (deviceId: string, incarnation = 'incarnation-1') => new Map([[deviceId, incarnation]]);

const step = { type: 'action' as const, action: 'click "x"', url: null, title: null, note: null };

describe('the task lease', () => {
  it('refuses a second driver while the first holds the task, and the first once its lease was taken over', async () => {
    const task = await runningTask();
    const [claimedByA] = await claimTasks(database.db, HOST, 'service-a', LEASE_MS, 10, running(task.deviceId), []);
    expect(claimedByA?.id).toBe(task.id);

    // B is refused everything while A holds the lease.
    expect(await claimTasks(database.db, HOST, 'service-b', LEASE_MS, 10, running(task.deviceId), [])).toEqual([]);
    expect((await renewLease(database.db, claimedByA!, 'service-b', LEASE_MS)).held).toBe(false);
    expect(await appendStep(database.db, task.id, task.orgId, 1, step, 'service-b')).toBe(false);
    expect(await appendStep(database.db, task.id, task.orgId, 1, step, 'service-a')).toBe(true);
    // Its first claim recorded the browser its page is built in.
    expect(claimedByA?.browserIncarnation).toBe('incarnation-1');

    // A is cut off past its lease (a partition): B takes the task over, saying so with a
    // driver_lost step, and from then on nothing A does counts, however late it comes.
    await sleep(LEASE_MS + 100);
    const [claimedByB] = await claimTasks(database.db, HOST, 'service-b', 60_000, 10, running(task.deviceId, 'incarnation-2'), []);
    expect(claimedByB?.id).toBe(task.id);
    expect((await renewLease(database.db, claimedByA!, 'service-a', LEASE_MS)).held).toBe(false);
    expect(await appendStep(database.db, task.id, task.orgId, 2, step, 'service-a')).toBe(false);
    expect(await handOverTask(database.db, task.id, 'service-a')).toBe(false);
    // The page B continues on is the one the task built, as recorded by A's claim: B's run
    // compares it with the browser it finds there.
    expect(claimedByB?.browserIncarnation).toBe('incarnation-1');
    const [row] = await database.db.select().from(tasks).where(eq(tasks.id, task.id));
    // usage.steps counts the run's own steps, not the service's observations.
    expect(row).toMatchObject({ status: 'running', leaseOwner: 'service-b', stepCount: 1 });
    const actions = await database.sql<Array<{ action: string }>>`select action from task_steps where task_id = ${task.id} order by seq`;
    expect(actions.map((step) => step.action)).toEqual(['click "x"', 'driver_lost']);
  });

  it('never claims again a task its owner still drives, however late its heartbeat; one whose run ended in the owner is claimed again', async () => {
    const task = await runningTask();
    await claimTasks(database.db, HOST, 'service-a', LEASE_MS, 10, running(task.deviceId), []);
    // A's heartbeat is late (the database was away, or the machine loaded): its lease ran out.
    await sleep(LEASE_MS + 100);
    expect(await claimTasks(database.db, HOST, 'service-a', 60_000, 10, running(task.deviceId), [task.id])).toEqual([]);
    expect((await renewLease(database.db, { ...(await taskRow(task.id)) }, 'service-a', LEASE_MS)).held).toBe(true);
    // A run of A that ended without ending its task leaves it to A's next claim.
    await sleep(LEASE_MS + 100);
    const [again] = await claimTasks(database.db, HOST, 'service-a', 60_000, 10, running(task.deviceId), []);
    expect(again).toMatchObject({ id: task.id, leaseOwner: 'service-a', attempts: 2 });
  });

  it('counts a step written again after its commit was not acknowledged once; another step at its seq means the run lost the task', async () => {
    const task = await runningTask();
    await claimTasks(database.db, HOST, 'service-a', 60_000, 10, running(task.deviceId), []);
    expect(await appendStep(database.db, task.id, task.orgId, 1, step, 'service-a')).toBe(true);
    // The retry of a write whose answer the database took down with it.
    expect(await appendStep(database.db, task.id, task.orgId, 1, step, 'service-a')).toBe(true);
    const [row] = await database.db.select().from(tasks).where(eq(tasks.id, task.id));
    expect(row!.stepCount).toBe(1);
    expect(await appendStep(database.db, task.id, task.orgId, 1, { ...step, action: 'click "y"' }, 'service-a')).toBe(false);
  });

  it('hands a run over with a handed_over step, for the next service of the host to claim at once', async () => {
    const task = await runningTask();
    await claimTasks(database.db, HOST, 'service-a', 60_000, 10, running(task.deviceId), []);
    expect(await handOverTask(database.db, task.id, 'service-a')).toBe(true);
    const claimed = await claimTasks(database.db, HOST, 'service-c', 60_000, 10, running(task.deviceId), []);
    expect(claimed.map((row) => row.id)).toContain(task.id);
    const actions = await database.sql<Array<{ action: string }>>`select action from task_steps where task_id = ${task.id} order by seq`;
    expect(actions.map((row) => row.action)).toEqual(['handed_over']);
  });

  it('frees at start what a dead process of the host held, with a driver_lost step', async () => {
    const task = await runningTask();
    await claimTasks(database.db, HOST, 'dead-process', 60_000, 10, running(task.deviceId), []);
    const freed = await releaseHostLeases(database.db, HOST, 'new-process');
    expect(freed).toContain(task.id);
    const [row] = await database.db.select().from(tasks).where(eq(tasks.id, task.id));
    expect(row!.leaseOwner).toBeNull();
    const actions = await database.sql<Array<{ action: string }>>`select action from task_steps where task_id = ${task.id} order by seq`;
    expect(actions.map((step) => step.action)).toEqual(['driver_lost']);
  });

  it('fails a task for its host only once the host has been silent longer than browsers are kept', async () => {
    await registerHost(database.db, 'host-silent', 'http://127.0.0.1:2');
    const task = await runningTask('host-silent');
    await claimTasks(database.db, 'host-silent', 'service-s', 50, 10, running(task.deviceId), []);
    await sleep(100);
    // The lease ran out, but the host still writes its heartbeat: its next service continues the task.
    await heartbeatHost(database.db, 'host-silent');
    expect(await failLostRunningTasks(database.db, 2_000, [])).not.toContain(task.id);
    // Silent past the keep time: the browser and the page are gone with the host.
    await database.db.update(hosts).set({ heartbeatAt: sql`now() - interval '3 seconds'` }).where(eq(hosts.hostId, 'host-silent'));
    expect(await failLostRunningTasks(database.db, 2_000, [])).toContain(task.id);
    const [row] = await database.db.select().from(tasks).where(eq(tasks.id, task.id));
    expect(row).toMatchObject({ status: 'failed', result: { error: 'device_lost' } });
  });

  it('fails a waiting task whose device let go of it (its browser died), whatever its host', async () => {
    const task = await runningTask();
    await heartbeatHost(database.db, HOST);
    await database.db.update(devices).set({ currentTaskId: null, status: 'error' }).where(eq(devices.id, task.deviceId));
    expect(await failLostRunningTasks(database.db, 60_000, [])).toContain(task.id);
    const [row] = await database.db.select().from(tasks).where(eq(tasks.id, task.id));
    expect(row).toMatchObject({ status: 'failed', result: { error: 'device_lost' } });
  });
});
