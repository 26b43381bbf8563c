import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../../db/schema';
import { emitEvent } from '../../server/domain/events/emit-event';
import { eventCatalogue } from '../../server/domain/events/catalogue';
import { generateWebhookSecret } from '../../server/domain/webhooks/signature';
import { apiClient, type ApiCall } from '../support/http';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { startWebhookReceiver } from '../support/webhook-receiver';

// Private destinations are NOT allowed here, as in production: endpoints point at a public
// address literal, which is judged without DNS and never contacted (no event is emitted to it).
const PUBLIC_URL = 'https://93.184.216.34/hooks/operator';

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;

beforeAll(async () => {
  test = await startTestService({ OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '50', OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'false' });
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:webhooks:read', 'operator:webhooks:write', 'operator:audit:read']));
});
afterAll(async () => {
  await test?.stop();
});

function expectError(response: { status: number; body: any }, status: number, code: string, param?: string) {
  expect(response.status).toBe(status);
  expect(response.body.error.code).toBe(code);
  if (param !== undefined) expect(response.body.error.param).toBe(param);
}

const RECORD_FIELDS = [
  'created_at',
  'description',
  'disabled_at',
  'enabled',
  'event_types',
  'failure_count',
  'id',
  'last_error',
  'last_success_at',
  'object',
  'space_id',
  'updated_at',
  'url',
];

describe('endpoint CRUD', () => {
  it('creates with the secret once, and never shows it again', async () => {
    const created = await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, description: 'orders', event_types: ['operator.task.succeeded.v1'] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^whe_[0-9a-f-]{36}$/),
      object: 'webhook_endpoint',
      url: PUBLIC_URL,
      description: 'orders',
      enabled: true,
      event_types: ['operator.task.succeeded.v1'],
      failure_count: 0,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: created.body.created_at,
      disabled_at: null,
      last_error: null,
      last_success_at: null,
      space_id: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const { secret, id } = created.body;
    const responses = [
      await api('GET', `/v1/webhook_endpoints/${id}`),
      await api('GET', '/v1/webhook_endpoints'),
      await api('PATCH', `/v1/webhook_endpoints/${id}`, { description: 'orders v2' }),
      await api('GET', `/v1/audit?resource_id=${id}`),
    ];
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(JSON.stringify(response.body)).not.toContain(secret);
      expect(JSON.stringify(response.body)).not.toContain('"secret"');
    }
    expect(Object.keys(responses[0]!.body).sort()).toEqual(RECORD_FIELDS);
  });

  it('lists newest first with pagination, gets, patches and deletes (second delete 404)', async () => {
    const other = await createTenant(test);
    const call = apiClient(test.url, await other.key(['operator:webhooks:read', 'operator:webhooks:write']));
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await call('POST', '/v1/webhook_endpoints', { url: `${PUBLIC_URL}/${i}` })).body.id);
    const first = await call('GET', '/v1/webhook_endpoints?limit=2');
    expect(first.body.data.map((e: any) => e.id)).toEqual([ids[2], ids[1]]);
    const second = await call('GET', `/v1/webhook_endpoints?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], next_cursor: '' });
    expectError(await call('GET', '/v1/webhook_endpoints?cursor=garbage'), 400, 'invalid_cursor');

    const patched = await call('PATCH', `/v1/webhook_endpoints/${ids[0]}`, {
      description: 'renamed',
      event_types: ['operator.device.created.v1', 'operator.device.created.v1'],
      url: `${PUBLIC_URL}/moved`,
      enabled: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      description: 'renamed',
      event_types: ['operator.device.created.v1'],
      url: `${PUBLIC_URL}/moved`,
      enabled: false,
      disabled_at: expect.any(String),
    });
    expect(patched.body.updated_at >= patched.body.created_at).toBe(true);
    expect((await call('GET', `/v1/webhook_endpoints/${ids[0]}`)).body).toEqual(patched.body);

    const deleted = await call('DELETE', `/v1/webhook_endpoints/${ids[0]}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    expectError(await call('DELETE', `/v1/webhook_endpoints/${ids[0]}`), 404, 'webhook_endpoint_not_found');
    expectError(await call('GET', `/v1/webhook_endpoints/${ids[0]}`), 404, 'webhook_endpoint_not_found');
    expectError(await call('PATCH', `/v1/webhook_endpoints/${ids[0]}`, { enabled: true }), 404, 'webhook_endpoint_not_found');
  });

  it('answers another organization’s or a malformed id with the same 404', async () => {
    const created = await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL });
    const stranger = await createTenant(test);
    const call = apiClient(test.url, await stranger.key(['operator:webhooks:read', 'operator:webhooks:write']));
    const foreign = await call('GET', `/v1/webhook_endpoints/${created.body.id}`);
    expectError(foreign, 404, 'webhook_endpoint_not_found');
    for (const [method, body] of [['PATCH', { enabled: false }], ['DELETE', undefined]] as const) {
      expectError(await call(method, `/v1/webhook_endpoints/${created.body.id}`, body), 404, 'webhook_endpoint_not_found');
    }
    for (const id of ['whe_nope', 'dev_00000000-0000-0000-0000-000000000000', `whe_${crypto.randomUUID()}`]) {
      const response = await call('GET', `/v1/webhook_endpoints/${id}`);
      expectError(response, 404, 'webhook_endpoint_not_found');
      expect(response.body.error.message).toBe(foreign.body.error.message);
    }
    expect((await call('GET', '/v1/webhook_endpoints')).body.data).toEqual([]);
    expect((await api('GET', `/v1/webhook_endpoints/${created.body.id}`)).body.enabled).toBe(true);
  });

  it('needs operator:webhooks:write to change and :read to look', async () => {
    const reader = apiClient(test.url, await tenant.key(['operator:webhooks:read']));
    const writer = apiClient(test.url, await tenant.key(['operator:webhooks:write']));
    const created = await writer('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL });
    expect(created.status).toBe(201);
    expectError(await reader('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL }), 403, 'insufficient_scope');
    expectError(await reader('PATCH', `/v1/webhook_endpoints/${created.body.id}`, { enabled: false }), 403, 'insufficient_scope');
    expectError(await reader('DELETE', `/v1/webhook_endpoints/${created.body.id}`), 403, 'insufficient_scope');
    expectError(await writer('GET', `/v1/webhook_endpoints/${created.body.id}`), 403, 'insufficient_scope');
    expectError(await writer('GET', '/v1/webhook_endpoints'), 403, 'insufficient_scope');
    expect((await reader('GET', `/v1/webhook_endpoints/${created.body.id}`)).status).toBe(200);
  });

  it('validates the body: url required, event types from the deliverable catalogue only', async () => {
    expectError(await api('POST', '/v1/webhook_endpoints', {}), 400, 'invalid_request', 'url');
    expectError(await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, colour: 'blue' }), 400, 'invalid_request');
    for (const type of ['operator.device.exploded.v1', 'operator.webhook.created.v1', 'operator.webhook.disabled.v1']) {
      expectError(await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, event_types: [type] }), 400, 'unknown_event_type', 'event_types');
    }
    const created = await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL });
    expect(created.body.event_types).toEqual([]);
    expectError(
      await api('PATCH', `/v1/webhook_endpoints/${created.body.id}`, { event_types: ['operator.webhook.updated.v1'] }),
      400,
      'unknown_event_type',
      'event_types',
    );
    for (const enabled of ['yes', 'false', 0]) {
      expectError(await api('PATCH', `/v1/webhook_endpoints/${created.body.id}`, { enabled }), 400, 'invalid_request', 'enabled');
    }
  });
});

describe('Spaces', () => {
  it('follows the Space rules of the key on create, list and get', async () => {
    const otherSpace = await tenant.newSpace();
    const spaceKey = apiClient(test.url, await tenant.key(['operator:webhooks:read', 'operator:webhooks:write'], [tenant.spaceId]));

    const mine = await spaceKey('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, space_id: tenant.spaceId });
    expect(mine.status).toBe(201);
    expect(mine.body.space_id).toBe(tenant.spaceId);
    expectError(await spaceKey('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL }), 403, 'insufficient_scope');
    expectError(await spaceKey('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, space_id: null }), 403, 'insufficient_scope');
    expectError(await spaceKey('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, space_id: otherSpace }), 403, 'insufficient_scope');
    const strangersSpace = (await createTenant(test)).spaceId;
    for (const space_id of [strangersSpace, crypto.randomUUID(), 'not-a-uuid']) {
      expectError(await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, space_id }), 400, 'invalid_request', 'space_id');
    }

    const orgWide = await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, space_id: null });
    const inOther = await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL, space_id: otherSpace });
    expect(orgWide.body.space_id).toBeNull();
    expectError(await spaceKey('GET', `/v1/webhook_endpoints/${orgWide.body.id}`), 403, 'insufficient_scope');
    expectError(await spaceKey('GET', `/v1/webhook_endpoints/${inOther.body.id}`), 403, 'insufficient_scope');
    expectError(await spaceKey('DELETE', `/v1/webhook_endpoints/${inOther.body.id}`), 403, 'insufficient_scope');
    expect((await spaceKey('GET', `/v1/webhook_endpoints/${mine.body.id}`)).status).toBe(200);

    expectError(await spaceKey('GET', '/v1/webhook_endpoints'), 400, 'invalid_request', 'space_id');
    expectError(await spaceKey('GET', `/v1/webhook_endpoints?space_id=${otherSpace}`), 403, 'insufficient_scope');
    const listed = await spaceKey('GET', `/v1/webhook_endpoints?space_id=${tenant.spaceId}`);
    expect(listed.body.data.map((e: any) => e.id)).toEqual([mine.body.id]);
    const filtered = await api('GET', `/v1/webhook_endpoints?space_id=${otherSpace}&limit=100`);
    expect(filtered.body.data.map((e: any) => e.id)).toEqual([inOther.body.id]);
  });
});

describe('destination safety with private destinations not allowed', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]:8080/hook',
    'http://localhost:8080/hook',
    'ftp://93.184.216.34/',
    'https://user:pw@93.184.216.34/',
    'not a url',
  ])('refuses %s at create and at update with 400 invalid_request param url', async (url) => {
    expectError(await api('POST', '/v1/webhook_endpoints', { url }), 400, 'invalid_request', 'url');
    const created = await api('POST', '/v1/webhook_endpoints', { url: PUBLIC_URL });
    expectError(await api('PATCH', `/v1/webhook_endpoints/${created.body.id}`, { url }), 400, 'invalid_request', 'url');
    expect((await api('GET', `/v1/webhook_endpoints/${created.body.id}`)).body.url).toBe(PUBLIC_URL);
  });

  it('refuses at delivery time too, recording blocked_destination and sending nothing', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const other = await createTenant(test);
      const db = test.service.services.db;
      // Stored directly, as if the setting had been on when it was created.
      const [row] = await db
        .insert(webhookEndpoints)
        .values({ orgId: other.orgId, url: receiver.url, eventTypes: [], secret: generateWebhookSecret() })
        .returning();
      await db.transaction((tx) =>
        emitEvent(tx, { orgId: other.orgId, spaceId: other.spaceId, type: 'operator.device.created.v1', resource: { object: 'device' } }),
      );
      const deadline = Date.now() + 10_000;
      let endpoint = row!;
      while (endpoint.lastError === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        endpoint = (await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, row!.id)))[0]!;
      }
      expect(endpoint.lastError).toBe('blocked_destination');
      expect(endpoint.failureCount).toBeGreaterThan(0);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});

describe('GET /v1/event_types', () => {
  it('publishes the catalogue to any valid key, audit-only types marked', async () => {
    const anyKey = apiClient(test.url, await tenant.key([]));
    const response = await anyKey('GET', '/v1/event_types');
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(eventCatalogue.map(({ type, description, deliverable }) => ({ type, description, deliverable })));
    expect(response.body.data.filter((t: any) => !t.deliverable).map((t: any) => t.type)).toEqual([
      'operator.webhook.created.v1',
      'operator.webhook.updated.v1',
      'operator.webhook.deleted.v1',
      'operator.webhook.disabled.v1',
    ]);
    expect((await apiClient(test.url)('GET', '/v1/event_types')).status).toBe(401);
  });
});

describe('audit trail', () => {
  it('records create, update and delete without the secret or the URL path', async () => {
    const created = await api('POST', '/v1/webhook_endpoints', { url: `${PUBLIC_URL}/T000/B000/token123` });
    await api('PATCH', `/v1/webhook_endpoints/${created.body.id}`, { enabled: false });
    await api('DELETE', `/v1/webhook_endpoints/${created.body.id}`);
    const audit = await api('GET', `/v1/audit?resource_id=${created.body.id}`);
    expect(audit.body.data.map((e: any) => e.action)).toEqual([
      'operator.webhook.deleted.v1',
      'operator.webhook.updated.v1',
      'operator.webhook.created.v1',
    ]);
    expect(audit.body.data[2].details).toEqual({ url_origin: 'https://93.184.216.34', event_types: [] });
    expect(audit.body.data[1].details).toEqual({ changed: ['enabled'], enabled: false });
    const text = JSON.stringify(audit.body);
    expect(text).not.toContain(created.body.secret);
    expect(text).not.toContain('token123');
  });
});
