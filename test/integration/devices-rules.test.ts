import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type ApiCall } from '../support/http';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// Device rules that need no browser tricks: input bounds, Space rules, tenancy, list
// filters and pages, idempotency, quotas, capacity and usage. One service for the file.
const MAX_BROWSERS = 3;
const DEVICE_SECOND_PRICE = 100;

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;

beforeAll(async () => {
  test = await startTestService({
    CHROMIUM_PATH: '/usr/bin/chromium',
    OPERATOR_MAX_BROWSERS: String(MAX_BROWSERS),
    OPERATOR_PRICE_DEVICE_SECOND_MICRO: String(DEVICE_SECOND_PRICE),
  });
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:usage:read']));
});
afterAll(async () => {
  await test?.stop();
});

const devicesWrite = ['operator:devices:read', 'operator:devices:write'] as const;

async function deleteAll(call: ApiCall, ids: string[]): Promise<void> {
  for (const id of ids) await call('DELETE', `/v1/devices/${id}`);
}

describe('create device input', () => {
  it('refuses out-of-range and unknown fields with 400 invalid_request naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ idle_suspend_secs: 59 }, 'idle_suspend_secs'],
      [{ idle_suspend_secs: 86_401 }, 'idle_suspend_secs'],
      [{ idle_suspend_secs: 90.5 }, 'idle_suspend_secs'],
      [{ region: 'mars' }, 'region'],
      [{ colour: 'blue' }, 'colour'],
    ];
    for (const [body, param] of cases) {
      const response = await api('POST', '/v1/devices', { space_id: tenant.spaceId, ...body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_request', param });
    }
    expect(test.service.services.browserPool.size).toBe(0);
  });
});

describe('Spaces and tenancy', () => {
  it('applies the create Space rules of the contract', async () => {
    const other = await createTenant(test);
    const second = await tenant.newSpace('second');
    const orgWide = await api('POST', '/v1/devices', {});
    expect(orgWide.status).toBe(400);
    expect(orgWide.body.error).toMatchObject({ code: 'invalid_request', param: 'space_id' });
    for (const spaceId of [other.spaceId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await api('POST', '/v1/devices', { space_id: spaceId });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'space_id' });
    }

    const single = apiClient(test.url, await tenant.key([...devicesWrite], [second]));
    const implicit = await single('POST', '/v1/devices', {});
    expect(implicit.status).toBe(201);
    expect(implicit.body.space_id).toBe(second);
    const notHeld = await single('POST', '/v1/devices', { space_id: tenant.spaceId });
    expect(notHeld.status).toBe(403);
    expect(notHeld.body.error.code).toBe('insufficient_scope');

    const several = apiClient(test.url, await tenant.key([...devicesWrite], [second, tenant.spaceId]));
    const ambiguous = await several('POST', '/v1/devices', {});
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.param).toBe('space_id');
    await deleteAll(api, [implicit.body.id]);
  });

  it('answers 404 for other organizations and malformed ids, 403 for a Space the key does not hold', async () => {
    const created = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
    const id: string = created.body.id;
    const other = await createTenant(test);
    const stranger = apiClient(test.url, await other.key([...devicesWrite]));
    for (const [method, suffix] of [['GET', ''], ['POST', '/sleep'], ['POST', '/wake'], ['DELETE', '']] as const) {
      const foreign = await stranger(method, `/v1/devices/${id}${suffix}`);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('device_not_found');
      const malformed = await api(method, `/v1/devices/dev_nope${suffix}`);
      expect(malformed.status).toBe(404);
      expect(malformed.body.error.code).toBe('device_not_found');
    }
    const elsewhere = apiClient(test.url, await tenant.key([...devicesWrite], [await tenant.newSpace()]));
    const forbidden = await elsewhere('GET', `/v1/devices/${id}`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('insufficient_scope');
    expect((await elsewhere('POST', `/v1/devices/${id}/sleep`)).status).toBe(403);
    expect((await api('GET', `/v1/devices/${id}`)).body.status).toBe('active');
    await deleteAll(api, [id]);
  });

  it('lists newest first with status and Space filters, pages and the Space-scoped key rule', async () => {
    const org = await createTenant(test);
    const space2 = await org.newSpace('two');
    const call = apiClient(test.url, await org.key([...devicesWrite]));
    // The idle_suspend_secs bounds are accepted on the way.
    const a = (await call('POST', '/v1/devices', { space_id: org.spaceId, name: 'a', idle_suspend_secs: 60 })).body;
    const b = (await call('POST', '/v1/devices', { space_id: space2, name: 'b' })).body;
    const c = (await call('POST', '/v1/devices', { space_id: org.spaceId, name: 'c', idle_suspend_secs: 86_400 })).body;
    await call('POST', `/v1/devices/${b.id}/sleep`);

    const all = await call('GET', '/v1/devices');
    expect(all.body.data.map((d: { name: string }) => d.name)).toEqual(['c', 'b', 'a']);
    expect(all.body.next_cursor).toBe('');
    const sleeping = await call('GET', '/v1/devices?status=sleeping');
    expect(sleeping.body.data.map((d: { name: string }) => d.name)).toEqual(['b']);
    const inSpace = await call('GET', `/v1/devices?space_id=${org.spaceId}`);
    expect(inSpace.body.data.map((d: { name: string }) => d.name)).toEqual(['c', 'a']);
    expect((await call('GET', '/v1/devices?status=asleep')).status).toBe(400);

    const first = await call('GET', '/v1/devices?limit=2');
    expect(first.body.data.map((d: { name: string }) => d.name)).toEqual(['c', 'b']);
    const second = await call('GET', `/v1/devices?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.data.map((d: { name: string }) => d.name)).toEqual(['a']);
    expect(second.body.next_cursor).toBe('');
    expect((await call('GET', '/v1/devices?cursor=garbage')).body.error.code).toBe('invalid_cursor');

    const scoped = apiClient(test.url, await org.key(['operator:devices:read'], [space2]));
    expect((await scoped('GET', '/v1/devices')).status).toBe(400);
    expect((await scoped('GET', `/v1/devices?space_id=${org.spaceId}`)).status).toBe(403);
    const own = await scoped('GET', `/v1/devices?space_id=${space2}`);
    expect(own.body.data.map((d: { name: string }) => d.name)).toEqual(['b']);
    await deleteAll(call, [a.id, b.id, c.id]);
  });
});

describe('idempotency', () => {
  it('creates one device for 20 concurrent creates with one Idempotency-Key, and refuses another body', async () => {
    const org = await createTenant(test);
    const call = apiClient(test.url, await org.key([...devicesWrite]));
    const body = { space_id: org.spaceId, name: 'once' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', '/v1/devices', body, { 'Idempotency-Key': 'create-once' })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    const listed = await call('GET', '/v1/devices');
    expect(listed.body.data).toHaveLength(1);
    const conflict = await call('POST', '/v1/devices', { ...body, name: 'twice' }, { 'Idempotency-Key': 'create-once' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
    await deleteAll(call, [responses[0]!.body.id]);
  });
});

describe('quotas', () => {
  it('blocks create past the device count with 403 device_quota_exceeded; the device itself counts on wake', async () => {
    const org = await createTenant(test, { maxDevices: 1 });
    const call = apiClient(test.url, await org.key([...devicesWrite]));
    const first = await call('POST', '/v1/devices', { space_id: org.spaceId });
    expect(first.status).toBe(201);
    const blocked = await call('POST', '/v1/devices', { space_id: org.spaceId });
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.code).toBe('device_quota_exceeded');
    await call('POST', `/v1/devices/${first.body.id}/sleep`);
    expect((await call('POST', '/v1/devices', { space_id: org.spaceId })).status).toBe(403);
    expect((await call('POST', `/v1/devices/${first.body.id}/wake`)).status).toBe(202);
    await call('DELETE', `/v1/devices/${first.body.id}`);
    const after = await call('POST', '/v1/devices', { space_id: org.spaceId });
    expect(after.status).toBe(201);
    await deleteAll(call, [after.body.id]);
  });

  it('keeps the count race-free under concurrent creates', async () => {
    const org = await createTenant(test, { maxDevices: 2 });
    const call = apiClient(test.url, await org.key([...devicesWrite]));
    const responses = await Promise.all(Array.from({ length: 5 }, () => call('POST', '/v1/devices', { space_id: org.spaceId })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 403, 403, 403]);
    await deleteAll(call, responses.filter((r) => r.status === 201).map((r) => r.body.id));
  });

  it('blocks create and wake once the rolling device-seconds are used, with 403 duration_quota_exceeded', async () => {
    const org = await createTenant(test, { maxDeviceSeconds: 1 });
    const call = apiClient(test.url, await org.key([...devicesWrite]));
    const first = await call('POST', '/v1/devices', { space_id: org.spaceId });
    expect(first.status).toBe(201);
    await sleep(1_200);
    const blocked = await call('POST', '/v1/devices', { space_id: org.spaceId });
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.code).toBe('duration_quota_exceeded');
    await call('POST', `/v1/devices/${first.body.id}/sleep`);
    const wake = await call('POST', `/v1/devices/${first.body.id}/wake`);
    expect(wake.status).toBe(403);
    expect(wake.body.error.code).toBe('duration_quota_exceeded');
    expect((await call('GET', `/v1/devices/${first.body.id}`)).body.status).toBe('sleeping');
    await deleteAll(call, [first.body.id]);
  });

  it('checks the device count before the duration', async () => {
    const org = await createTenant(test, { maxDevices: 1, maxDeviceSeconds: 1 });
    const call = apiClient(test.url, await org.key([...devicesWrite]));
    const first = await call('POST', '/v1/devices', { space_id: org.spaceId });
    await sleep(1_200);
    expect((await call('POST', '/v1/devices', { space_id: org.spaceId })).body.error.code).toBe('device_quota_exceeded');
    await deleteAll(call, [first.body.id]);
  });
});

describe('capacity', () => {
  it('answers 503 capacity_exhausted with Retry-After when every browser slot is taken, leaving no device behind', async () => {
    const org = await createTenant(test);
    const call = apiClient(test.url, await org.key([...devicesWrite]));
    const pool = test.service.services.browserPool;
    const made: string[] = [];
    while (pool.size < MAX_BROWSERS) made.push((await call('POST', '/v1/devices', { space_id: org.spaceId })).body.id);
    const full = await call('POST', '/v1/devices', { space_id: org.spaceId });
    expect(full.status).toBe(503);
    expect(full.body.error.code).toBe('capacity_exhausted');
    expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call('GET', '/v1/devices')).body.data).toHaveLength(made.length);

    await call('POST', `/v1/devices/${made[0]}/sleep`);
    made.push((await call('POST', '/v1/devices', { space_id: org.spaceId })).body.id);
    const wake = await call('POST', `/v1/devices/${made[0]}/wake`);
    expect(wake.status).toBe(503);
    expect(wake.body.error.code).toBe('capacity_exhausted');
    expect((await call('GET', `/v1/devices/${made[0]}`)).body.status).toBe('sleeping');
    await deleteAll(call, made);
  });
});

describe('usage', () => {
  it('reports the contract rows; device time grows while active and stops while sleeping', async () => {
    const org = await createTenant(test);
    const call = apiClient(test.url, await org.key([...devicesWrite, 'operator:usage:read']));
    const created = await call('POST', '/v1/devices', { space_id: org.spaceId });
    await sleep(2_100);
    const active = await call('GET', '/v1/usage');
    expect(active.status).toBe(200);
    const deviceRow = (body: { data: Array<{ kind: string; quantity: number }> }) => body.data.find((row) => row.kind === 'device_duration')!;
    expect(deviceRow(active.body).quantity).toBeGreaterThanOrEqual(2);
    expect(active.body.data).toEqual([
      { kind: 'device_duration', resource: 'device', unit: 'second', window: 'rolling_24h', quantity: expect.any(Number), cost_micro: deviceRow(active.body).quantity * DEVICE_SECOND_PRICE },
      { kind: 'session_duration', resource: 'session', unit: 'second', window: 'rolling_24h', quantity: 0 },
      { kind: 'task', resource: 'task', unit: 'count', window: 'rolling_24h', quantity: 0 },
      { kind: 'step', resource: 'task', unit: 'count', window: 'rolling_24h', quantity: 0 },
      { kind: 'operator.model.input_tokens', resource: 'task', unit: 'token', window: 'rolling_24h', quantity: 0 },
      { kind: 'operator.model.output_tokens', resource: 'task', unit: 'token', window: 'rolling_24h', quantity: 0 },
    ]);

    await call('POST', `/v1/devices/${created.body.id}/sleep`);
    const asleep = deviceRow((await call('GET', '/v1/usage?product=operator')).body).quantity;
    await sleep(1_100);
    expect(deviceRow((await call('GET', '/v1/usage')).body).quantity).toBe(asleep);
    await deleteAll(call, [created.body.id]);
  });

  it('counts tasks and steps of the last 24 hours of the caller organization only', async () => {
    const org = await createTenant(test);
    const call = apiClient(test.url, await org.key(['operator:usage:read']));
    const sql = test.service.services.sql;
    const deviceId = '00000000-0000-4000-8000-000000000001';
    const [recent] = await sql<{ id: string }[]>`
      insert into tasks (org_id, space_id, device_id, status, prompt, deadline_at)
      values (${org.orgId}, ${org.spaceId}, ${deviceId}, 'succeeded', 'go to x', now()) returning id`;
    await sql`
      insert into tasks (org_id, space_id, device_id, status, prompt, deadline_at, created_at)
      values (${org.orgId}, ${org.spaceId}, ${deviceId}, 'failed', 'old', now(), now() - interval '25 hours')`;
    await sql`insert into task_steps (task_id, seq, org_id, type) values (${recent!.id}, 1, ${org.orgId}, 'action'), (${recent!.id}, 2, ${org.orgId}, 'observation')`;
    await sql`
      insert into tasks (org_id, space_id, device_id, status, prompt, deadline_at)
      values (${tenant.orgId}, ${tenant.spaceId}, ${deviceId}, 'succeeded', 'another org', now())`;
    const usage = await call('GET', '/v1/usage');
    const quantity = (kind: string) => usage.body.data.find((row: { kind: string }) => row.kind === kind).quantity;
    expect([quantity('task'), quantity('step')]).toEqual([1, 2]);
  });

  it('refuses another product, a Space-scoped key and a key without the scope', async () => {
    const wrongProduct = await api('GET', '/v1/usage?product=other');
    expect(wrongProduct.status).toBe(400);
    expect(wrongProduct.body.error).toMatchObject({ code: 'invalid_request', param: 'product' });
    const spaceKey = apiClient(test.url, await tenant.key(['operator:usage:read'], [tenant.spaceId]));
    expect((await spaceKey('GET', '/v1/usage')).body.error.code).toBe('insufficient_scope');
    const noScope = apiClient(test.url, await tenant.key(['operator:devices:read']));
    expect((await noScope('GET', '/v1/usage')).status).toBe(403);
  });
});
