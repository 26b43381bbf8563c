import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { connectDatabase, type Database } from '../../../db/client';
import { applyMigrations } from '../../../db/migrate';
import { auditEvents, devices, events, tasks } from '../../../db/schema';
import { startRoundTripCounter, type RoundTripCounter } from '../../../test/support/round-trip-counter';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database';
import { createOrganization, createSpace } from '../orgs/operator-admin';
import { systemActor } from '../keys/principal';
import { submitTask } from './submit-task';
import { endTask, lockTask } from './task-transitions';

// A submit's transaction holds the device's slot until it commits, and the device's worker
// starts the task only then; an end's commit is what frees the slot and tells the client.
// Their writes that need no answer of another go together, in one round trip.
describe("a task's submit and end on a real database", () => {
  let testDatabase: TestDatabase;
  let counter: RoundTripCounter;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    const migrating = connectDatabase(testDatabase.url, 2);
    await applyMigrations(migrating);
    await migrating.close();
    counter = await startRoundTripCounter(testDatabase.url);
    // One connection, so every statement goes through the proxy in order.
    database = connectDatabase(counter.url, 1);
  });

  afterAll(async () => {
    await database.close();
    await counter.close();
    await testDatabase.drop();
  });

  /** A new organization with a Space; answers what submits a task on a new active device there, counting the submit's round trips. */
  async function tenant() {
    const { org_id: orgId } = await createOrganization(database.db, { name: 'submits', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const spaceId = (await createSpace(database.db, orgId, 'default')).space_id;
    const principal = { keyId: 'key_test', orgId, scopes: new Set(['operator:tasks:write'] as const), spaceIds: [], entitled: true };
    const deps = { db: database.db, config: { agent: { taskTimeoutMs: 60_000, leaseMs: 30_000 } } };
    return async () => {
      const [device] = await database.db.insert(devices).values({ orgId, spaceId, name: 'd', region: 'local', status: 'active', idleSuspendSecs: 300 }).returning();
      let taskId = '';
      const trips = await counter.count(async () => {
        taskId = (await submitTask(deps, { principal, requestId: 'req_test', device: device!, body: { prompt: 'go to https://example.com' }, idempotencyKey: undefined })).id;
      });
      return { trips, taskId: taskId.replace(/^task_/, ''), deviceId: device!.id, orgId };
    };
  }

  it('is BEGIN, the slot, the task, then its audit entry, event and notification together, and COMMIT', async () => {
    const submit = await tenant();
    // The first submit prepares each statement on the connection (a describe before each).
    await submit();
    const { trips, taskId, deviceId } = await submit();
    expect(trips).toBe(5);

    const [task] = await database.db.select().from(tasks).where(eq(tasks.id, taskId));
    expect(task).toMatchObject({ status: 'running', deviceId });
    const [device] = await database.db.select().from(devices).where(eq(devices.id, deviceId));
    expect(device!.currentTaskId).toBe(taskId);
    expect(await database.db.select().from(auditEvents).where(eq(auditEvents.resourceId, `task_${taskId}`))).toHaveLength(1);
    const created = await database.db.select().from(events).where(eq(events.type, 'operator.task.created.v1'));
    expect(created.map((event) => (event.envelope as { data: { object: { id: string } } }).data.object.id)).toContain(`task_${taskId}`);
  });

  it('ends in BEGIN, the lock, the task, its releases together, its audit entry, event and notification together, and COMMIT', async () => {
    const submit = await tenant();
    const end = async () => {
      const { taskId, deviceId, orgId } = await submit();
      const trips = await counter.count(() =>
        database.db.transaction(async (tx) => endTask(tx, (await lockTask(tx, taskId))!, { status: 'succeeded', result: 'done' }, systemActor(orgId))),
      );
      return { trips, taskId, deviceId };
    };
    // The first end prepares each statement on the connection.
    await end();
    const { trips, taskId, deviceId } = await end();
    expect(trips).toBe(6);

    const [task] = await database.db.select().from(tasks).where(eq(tasks.id, taskId));
    expect(task).toMatchObject({ status: 'succeeded', result: 'done', leaseOwner: null });
    const [device] = await database.db.select().from(devices).where(eq(devices.id, deviceId));
    expect(device!.currentTaskId).toBeNull();
    const audited = await database.db.select().from(auditEvents).where(eq(auditEvents.resourceId, `task_${taskId}`));
    expect(audited.map((entry) => entry.action).sort()).toEqual(['operator.task.created', 'operator.task.succeeded']);
  });
});
