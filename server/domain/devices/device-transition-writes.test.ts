import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { connectDatabase, type Database } from '../../../db/client';
import { applyMigrations } from '../../../db/migrate';
import { auditEvents, deviceActivePeriods, devices, events } from '../../../db/schema';
import { startRoundTripCounter } from '../../../test/support/round-trip-counter';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database';
import { systemActor } from '../keys/principal';
import { createOrganization, createSpace } from '../orgs/operator-admin';
import { toDeviceResource } from './device-resource';
import { lockDevice, transitionDevice, type DeviceTransition } from './device-transitions';

// transitionDevice sends its writes together and answers with the row it computed from the
// locked one, never read back: what it answers must be what PostgreSQL holds.
describe('transitionDevice on a real database', () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = connectDatabase(testDatabase.url, 2);
    await applyMigrations(database);
  });

  afterAll(async () => {
    await database.close();
    await testDatabase.drop();
  });

  it('answers each transition with the row as stored, and writes its metering period, audit entry and event', async () => {
    const { org_id: orgId } = await createOrganization(database.db, { name: 'transitions', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const spaceId = (await createSpace(database.db, orgId, 'default')).space_id;
    const [created] = await database.db
      .insert(devices)
      .values({ orgId, spaceId, name: 'd', region: 'local', status: 'creating', idleSuspendSecs: 300, currentTaskId: '00000000-0000-4000-8000-000000000001', hostId: 'host_a' })
      .returning();
    const id = created!.id;

    const steps: Array<[DeviceTransition, string]> = [['created', 'active'], ['slept', 'sleeping'], ['woke', 'active'], ['terminated', 'terminated']];
    for (const [transition, status] of steps) {
      const answered = await database.db.transaction(async (tx) => transitionDevice(tx, systemActor(orgId), (await lockDevice(tx, id))!, transition));
      const [stored] = await database.db.select().from(devices).where(eq(devices.id, id));
      expect(answered).toEqual(stored);
      expect(stored!.status).toBe(status);
    }
    // The browser went away: the task slot is empty; the device kept its host and name.
    const [last] = await database.db.select().from(devices).where(eq(devices.id, id));
    expect(last).toMatchObject({ currentTaskId: null, hostId: 'host_a', name: 'd' });

    // Two stretches of activity (created → slept, woke → terminated), both closed.
    const periods = await database.db.select().from(deviceActivePeriods).where(eq(deviceActivePeriods.deviceId, id)).orderBy(asc(deviceActivePeriods.id));
    expect(periods).toHaveLength(2);
    expect(periods.every((period) => period.endedAt !== null && period.endedAt >= period.startedAt)).toBe(true);

    const publicId = toDeviceResource(last!).id;
    const audited = await database.db.select().from(auditEvents).where(eq(auditEvents.resourceId, publicId));
    expect(audited.map((entry) => entry.action).sort()).toEqual(['operator.device.created', 'operator.device.slept', 'operator.device.terminated', 'operator.device.woke']);
    const emitted = await database.db.select().from(events).where(eq(events.orgId, orgId));
    const objects = new Map(emitted.map((event) => [event.type, (event.envelope as { data: { object: { status: string } } }).data.object]));
    expect(objects.get('operator.device.terminated.v1')).toEqual(toDeviceResource(last!));
    expect([...objects.keys()].sort()).toEqual(['operator.device.created.v1', 'operator.device.slept.v1', 'operator.device.terminated.v1', 'operator.device.woke.v1']);
  });

  it('writes in one round trip: a delete is BEGIN, the lock, the writes and COMMIT', async () => {
    const counter = await startRoundTripCounter(testDatabase.url);
    // One connection, so every statement of the run goes through the proxy in order.
    const proxied = connectDatabase(counter.url, 1);
    try {
      const { org_id: orgId } = await createOrganization(proxied.db, { name: 'round trips', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
      const spaceId = (await createSpace(proxied.db, orgId, 'default')).space_id;
      const terminate = async () => {
        const [row] = await proxied.db.insert(devices).values({ orgId, spaceId, name: 'd', region: 'local', status: 'active', idleSuspendSecs: 300 }).returning();
        return counter.count(() => proxied.db.transaction(async (tx) => transitionDevice(tx, systemActor(orgId), (await lockDevice(tx, row!.id))!, 'terminated')));
      };
      // The first run prepares each statement on the connection (a describe before each).
      await terminate();
      expect(await terminate()).toBe(4);
    } finally {
      await proxied.close();
      await counter.close();
    }
  });
});
