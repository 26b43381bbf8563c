import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events, idempotencyKeys, webhookDeliveries, webhookEndpoints } from '../../db/schema';
import { OUTBOX_RETENTION_MS, pruneOutbox } from '../../server/domain/events/outbox-retention';
import { deleteExpiredIdempotencyKeys } from '../../server/domain/idempotency/with-idempotency';
import { createTenant, startTestService, type TestService } from '../support/test-service';

let test: TestService;

beforeAll(async () => {
  test = await startTestService();
});
afterAll(async () => {
  await test?.stop();
});

describe('retention', () => {
  it('prunes finished deliveries and unneeded events past the retention, and keeps what is still needed', async () => {
    const db = test.service.services.db;
    const tenant = await createTenant(test);
    const old = new Date(Date.now() - OUTBOX_RETENTION_MS - 60_000);
    const [endpoint] = await db
      .insert(webhookEndpoints)
      .values({ orgId: tenant.orgId, url: 'http://127.0.0.1:9/', eventTypes: [], secret: 'whsec_test' })
      .returning();
    const makeEvent = async (createdAt: Date) => {
      const id = randomUUID();
      await db.insert(events).values({ id, orgId: tenant.orgId, spaceId: null, type: 'operator.device.created.v1', envelope: {}, createdAt });
      return id;
    };
    const oldDone = await makeEvent(old);
    const oldPending = await makeEvent(old);
    const recent = await makeEvent(new Date());
    await db.insert(webhookDeliveries).values([
      { eventId: oldDone, endpointId: endpoint!.id, orgId: tenant.orgId, status: 'succeeded', createdAt: old },
      { eventId: oldPending, endpointId: endpoint!.id, orgId: tenant.orgId, status: 'pending', createdAt: old },
      { eventId: recent, endpointId: endpoint!.id, orgId: tenant.orgId, status: 'succeeded' },
    ]);

    expect(await pruneOutbox(db)).toEqual({ deliveries: 1, events: 1 });
    const left = await db.select({ id: events.id }).from(events).where(eq(events.orgId, tenant.orgId));
    expect(left.map((row) => row.id).sort()).toEqual([oldPending, recent].sort());
  });

  it('deletes idempotency records past their 24 h', async () => {
    const db = test.service.services.db;
    const tenant = await createTenant(test);
    await db.insert(idempotencyKeys).values([
      { orgId: tenant.orgId, route: 'r', key: 'expired', requestHash: 'h', state: 'completed', expiresAt: new Date(Date.now() - 1000) },
      { orgId: tenant.orgId, route: 'r', key: 'live', requestHash: 'h', state: 'completed', expiresAt: new Date(Date.now() + 60_000) },
    ]);
    await deleteExpiredIdempotencyKeys(db);
    const rows = await db.execute(sql`select key from idempotency_keys where org_id = ${tenant.orgId}`);
    expect(rows.map((row) => row.key)).toEqual(['live']);
  });
});
