import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpace, revokeApiKey } from '../../server/domain/orgs/operator-admin';
import { apiClient } from '../support/http';
import { createTenant, startAnotherInstance, startTestService, type TestService, type TestTenant } from '../support/test-service';

let test: TestService;
let tenant: TestTenant;

beforeAll(async () => {
  test = await startTestService();
  tenant = await createTenant(test);
});
afterAll(async () => {
  await test?.stop();
});

function expectContractError(response: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(response.status).toBe(status);
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toMatch(/^req_[0-9a-f-]{36}$/);
  expect(response.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String), request_id: requestId }) });
  expect(Object.keys(response.body.error).every((field) => ['code', 'message', 'request_id', 'param'].includes(field))).toBe(true);
}

describe('whoami', () => {
  it('answers for a valid key with its organization, scopes and Spaces', async () => {
    const key = await tenant.key(['operator:devices:read'], [tenant.spaceId]);
    const response = await apiClient(test.url, key)('GET', '/v1/whoami');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(response.body).toEqual({
      org_id: tenant.orgId,
      product: 'operator',
      scopes: ['operator:devices:read'],
      service_account_id: key.split('_')[3],
      space_ids: [tenant.spaceId],
    });
  });

  it('refuses a missing, malformed or unknown key with 401 invalid_api_key', async () => {
    const key = await tenant.key(['operator:devices:read']);
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    for (const authorization of [undefined, 'Bearer', `Basic ${key}`, 'Bearer nope', `Bearer ${tampered}`, `Bearer ${key.replace('_test_', '_live_')}`]) {
      const response = await apiClient(test.url)('GET', '/v1/whoami', undefined, authorization === undefined ? {} : { Authorization: authorization });
      expectContractError(response, 401, 'invalid_api_key');
      expect(JSON.stringify(response.body)).not.toContain(key.split('_')[4]!);
    }
  });

  it('sees a revoked key fail on every instance within 1 s', async () => {
    const key = await tenant.key(['operator:devices:read']);
    const second = await startAnotherInstance(test);
    try {
      const calls = [apiClient(test.url, key), apiClient(second.url, key)];
      for (const call of calls) expect((await call('GET', '/v1/whoami')).status).toBe(200);
      await revokeApiKey(test.service.services.db, key.split('_')[3]!, { publicUrl: test.service.services.config.http.publicUrl });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const call of calls) expectContractError(await call('GET', '/v1/whoami'), 401, 'invalid_api_key');
    } finally {
      await second.close();
    }
  });
});

describe('wire conventions', () => {
  it('answers an unknown route with 404 not_found and a wrong method with 405 method_not_allowed', async () => {
    const call = apiClient(test.url, await tenant.key(['operator:devices:read']));
    expectContractError(await call('GET', '/v1/no_such_thing'), 404, 'not_found');
    const wrongMethod = await call('DELETE', '/v1/whoami');
    expectContractError(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    // A path is a route however the route table matches it (any case, one trailing slash),
    // and the raw event-stream route is one too.
    for (const path of ['/v1/WhoAmI', '/v1/whoami/', '/v1/tasks/task_x/events']) {
      const response = await call('DELETE', path);
      expectContractError(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow')).toBe('GET');
    }
  });

  it('serves health, readiness and the OpenAPI 3.1 document without auth', async () => {
    const call = apiClient(test.url);
    expect((await call('GET', '/healthz')).body).toEqual({ ok: true });
    expect((await call('GET', '/readyz')).status).toBe(200);
    const document = await call('GET', '/v1/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.openapi).toBe('3.1.0');
    expect(document.body.info.version).toBe('0.1.0');
    expect(document.body.paths['/whoami'].get.responses['200']).toBeDefined();
    expect(document.body.components.schemas.Error).toBeDefined();
  });

  it('serves the API reference page at /docs with its script from our own origin', async () => {
    const page = await fetch(`${test.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-url="/v1/openapi.json"');
    const script = await fetch(`${test.url}/docs/scalar.js`);
    expect(script.status).toBe(200);
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });

  it('refuses unknown query parameters and out-of-range limits with invalid_request naming the parameter', async () => {
    const call = apiClient(test.url, await tenant.key(['operator:audit:read']));
    const unknown = await call('GET', '/v1/audit?colour=blue');
    expectContractError(unknown, 400, 'invalid_request');
    expect(unknown.body.error.param).toBe('colour');
    for (const limit of ['0', '101', 'ten', '1.5']) {
      const response = await call('GET', `/v1/audit?limit=${limit}`);
      expectContractError(response, 400, 'invalid_request');
      expect(response.body.error.param).toBe('limit');
    }
  });
});

describe('start-up', () => {
  it('refuses to start without Chromium, saying in one line how to install it', async () => {
    await expect(startAnotherInstance(test, { CHROMIUM_PATH: '/nonexistent/chromium' })).rejects.toThrow(
      /^Chromium not found at \/nonexistent\/chromium: install it \(apt-get install chromium\) or fix CHROMIUM_PATH$/,
    );
  });
});

describe('readiness', () => {
  it('answers /readyz with 503 once the database stops answering, while /healthz stays 200', async () => {
    const probed = await startTestService();
    try {
      expect((await fetch(`${probed.url}/readyz`)).status).toBe(200);
      // Dropping the database cuts every connection the service holds to it.
      await probed.database.drop();
      const ready = await fetch(`${probed.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await ready.json()).toMatchObject({ ok: false, reason: 'database_unreachable', error: { code: 'service_unavailable' } });
      expect((await fetch(`${probed.url}/healthz`)).status).toBe(200);
    } finally {
      await probed.stop().catch(() => undefined);
    }
  });
});

describe('rate limits', () => {
  it('answers 429 rate_limited with Retry-After and RateLimit-* headers past the burst', async () => {
    const limited = await startTestService({ OPERATOR_RATE_LIMIT_PER_SEC: '2', OPERATOR_RATE_LIMIT_BURST: '4' });
    try {
      const other = await createTenant(limited);
      const call = apiClient(limited.url, await other.key(['operator:devices:read']));
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 6; i += 1) {
        last = await call('GET', '/v1/whoami');
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
      expectContractError(last!, 429, 'rate_limited');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(last!.headers.get('ratelimit-limit')).toBe('4');
      expect(last!.headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(last!.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(0);
      // Another key has its own budget.
      expect((await apiClient(limited.url, await other.key(['operator:devices:read']))('GET', '/v1/whoami')).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });

  it('shares counters between instances with the PostgreSQL store', async () => {
    const first = await startTestService({ OPERATOR_RATE_LIMIT_PER_SEC: '2', OPERATOR_RATE_LIMIT_BURST: '4', OPERATOR_RATE_LIMIT_STORE: 'postgres' });
    const second = await startAnotherInstance(first);
    try {
      const other = await createTenant(first);
      const key = await other.key(['operator:devices:read']);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1) statuses.push((await apiClient(i % 2 === 0 ? first.url : second.url, key)('GET', '/v1/whoami')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await second.close();
      await first.stop();
    }
  });
});

describe('audit trail', () => {
  it('lists audit events newest first with filters, for either accepted scope', async () => {
    const other = await createTenant(test);
    const spaceId = await other.newSpace('audited');
    for (const scope of ['operator:audit:read', 'operator:webhooks:read'] as const) {
      const call = apiClient(test.url, await other.key([scope]));
      const response = await call('GET', `/v1/audit?action=operator.space.created.v1&limit=100`.replace('.v1', ''));
      expect(response.status).toBe(200);
      expect(response.body.next_cursor).toBe('');
      const ids = response.body.data.map((event: any) => event.resource_id);
      expect(ids[0]).toBe(spaceId);
      expect(ids).toContain(other.spaceId);
      expect(response.body.data[0]).toEqual({
        object: 'audit_event',
        id: expect.stringMatching(/^aud_[0-9a-f-]{36}$/),
        action: 'operator.space.created',
        actor: 'system',
        resource_type: 'space',
        resource_id: spaceId,
        request_id: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        details: { name: 'audited', via: 'cli' },
      });
      const byResource = await call('GET', `/v1/audit?resource_id=${spaceId}`);
      expect(byResource.body.data.map((event: any) => event.resource_id)).toEqual([spaceId]);
    }
    expectContractError(await apiClient(test.url, await other.key(['operator:devices:read']))('GET', '/v1/audit'), 403, 'insufficient_scope');
  });

  it('never shows another organization’s events', async () => {
    const first = await createTenant(test);
    const second = await createTenant(test);
    const response = await apiClient(test.url, await second.key(['operator:audit:read']))('GET', '/v1/audit?limit=100');
    expect(response.body.data.some((event: any) => event.resource_id === first.spaceId)).toBe(false);
  });
});

describe('pagination', () => {
  it('pages without duplicates or skips while rows are inserted between pages', async () => {
    const paged = await createTenant(test);
    const db = test.service.services.db;
    const created: string[] = [paged.spaceId];
    for (let i = 0; i < 11; i += 1) created.push((await createSpace(db, paged.orgId, `s${i}`)).space_id);
    const call = apiClient(test.url, await paged.key(['operator:audit:read']));
    const seen: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const response = await call('GET', `/v1/audit?action=operator.space.created&limit=5${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(response.status).toBe(200);
      seen.push(...response.body.data.map((event: any) => event.resource_id));
      cursor = response.body.next_cursor;
      pages += 1;
      // Newer rows arriving mid-walk must not shift the older ones.
      await createSpace(db, paged.orgId, `late${pages}`);
    } while (cursor !== '');
    // The listing's own order over the rows there when the walk began: newest first, the id
    // breaking the tie of two created in one millisecond (which a fast host does).
    const listed = await db.execute(
      sql`select resource_id from audit_events where action = 'operator.space.created' and resource_id in ${created} order by created_at desc, id desc`,
    );
    expect(listed.map((row) => row.resource_id)).toHaveLength(created.length);
    expect(seen).toEqual(listed.map((row) => row.resource_id));
    expect(pages).toBe(3);
  });

  it('refuses tampered, garbage and foreign-list cursors with 400 invalid_cursor', async () => {
    const paged = await createTenant(test);
    const db = test.service.services.db;
    for (let i = 0; i < 3; i += 1) await createSpace(db, paged.orgId, `c${i}`);
    const call = apiClient(test.url, await paged.key(['operator:audit:read']));
    const first = await call('GET', '/v1/audit?limit=1');
    const cursor: string = first.body.next_cursor;
    expect(cursor).not.toBe('');
    const tampered = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    for (const bad of [tampered, 'garbage', `${cursor}x`]) {
      const response = await call('GET', `/v1/audit?limit=1&cursor=${encodeURIComponent(bad)}`);
      expectContractError(response, 400, 'invalid_cursor');
    }
    const otherList = await call('GET', `/v1/audit?limit=1&action=operator.space.created&cursor=${encodeURIComponent(cursor)}`);
    expectContractError(otherList, 400, 'invalid_cursor');
  });
});

describe('database', () => {
  it('applies migrations at start (readyz) and records keys only as hashes', async () => {
    const key = await tenant.key(['operator:devices:read']);
    const secret = key.split('_')[4]!;
    const rows = await test.service.services.db.execute(sql`select secret_hash from api_keys where key_id = ${key.split('_')[3]!}`);
    expect(rows[0]!.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(secret);
    const audit = await test.service.services.db.execute(sql`select details from audit_events where resource_id = ${key.split('_')[3]!}`);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });
});
