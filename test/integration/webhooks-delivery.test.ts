import { existsSync } from 'node:fs';
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events, webhookDeliveries } from '../../db/schema';
import { emitEvent, type DomainEvent } from '../../server/domain/events/emit-event';
// Through the published export, as a customer imports it.
import { verifyWebhook } from 'browser-device-operator/verify-webhook';
import { apiClient, type ApiCall } from '../support/http';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { startWebhookReceiver, type ReceivedDelivery, type WebhookReceiver } from '../support/webhook-receiver';

const CHROMIUM = '/usr/bin/chromium';
let test: TestService;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  test = await startTestService({
    OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // Fast retries so twenty failures take about a second; 2 s bounds a held-open request.
    OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '50',
    OPERATOR_WEBHOOK_TIMEOUT_MS: '2000',
    CHROMIUM_PATH: CHROMIUM,
  });
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await test?.stop();
});

async function receiver(answer?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(answer);
  receivers.push(started);
  return started;
}

interface Subscriber {
  tenant: TestTenant;
  api: ApiCall;
  endpoint: any;
  secret: string;
}

/** A fresh organization with one organization-wide endpoint pointing at `url`. */
async function subscribe(url: string, body: Record<string, unknown> = {}): Promise<Subscriber> {
  const tenant = await createTenant(test);
  const api = apiClient(test.url, await tenant.key(['operator:webhooks:read', 'operator:webhooks:write', 'operator:audit:read']));
  const created = await api('POST', '/v1/webhook_endpoints', { url, ...body });
  expect(created.status).toBe(201);
  const { secret, ...endpoint } = created.body;
  return { tenant, api, endpoint, secret };
}

function deviceEvent(tenant: TestTenant, type: DomainEvent['type'] = 'operator.device.created.v1'): DomainEvent {
  return {
    orgId: tenant.orgId,
    spaceId: tenant.spaceId,
    type,
    resource: { id: `dev_${crypto.randomUUID()}`, object: 'device', name: 'd', region: 'local', space_id: tenant.spaceId, status: 'active' },
  };
}

async function emit(event: DomainEvent): Promise<void> {
  await test.service.services.db.transaction((tx) => emitEvent(tx, event));
}

function verified(delivery: ReceivedDelivery, secret: string) {
  return verifyWebhook(delivery.rawBody, delivery.headers['x-service-signature'] as string, secret);
}

async function waitForEndpoint(api: ApiCall, id: string, done: (endpoint: any) => boolean, timeoutMs = 10_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api('GET', `/v1/webhook_endpoints/${id}`);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    if (Date.now() > deadline) throw new Error(`endpoint never reached the expected state: ${JSON.stringify(response.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('signed delivery', () => {
  it('delivers a device event with headers and an envelope that verify with verifyWebhook', async () => {
    const target = await receiver();
    const { tenant, api, endpoint, secret } = await subscribe(target.url);
    const event = deviceEvent(tenant);
    await emit(event);
    const [delivery] = await target.waitFor(1);
    expect(delivery!.method).toBe('POST');
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['x-service-event']).toBe('operator.device.created.v1');
    expect(delivery!.headers['x-service-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(delivery!.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const envelope = verified(delivery!, secret);
    expect(envelope).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
      object: 'event',
      type: 'operator.device.created.v1',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      api_version: '0.1.0',
      org_id: tenant.orgId,
      space_id: tenant.spaceId,
      data: { object: event.resource },
    });
    expect(() => verifyWebhook(delivery!.rawBody, delivery!.headers['x-service-signature'] as string, 'whsec_wrong')).toThrow();
    const healthy = await waitForEndpoint(api, endpoint.id, (e) => e.last_success_at !== null);
    expect(healthy).toMatchObject({ failure_count: 0, last_error: null, enabled: true });
  });

  it('delivers a finished task event, signed', async () => {
    const target = await receiver();
    const { tenant, secret } = await subscribe(target.url, { event_types: ['operator.task.succeeded.v1'] });
    await emit(deviceEvent(tenant)); // not subscribed: never sent
    const task = { id: `task_${crypto.randomUUID()}`, object: 'task', status: 'succeeded', result: 'Example Domain' };
    await emit({ orgId: tenant.orgId, spaceId: tenant.spaceId, type: 'operator.task.succeeded.v1', resource: task });
    const [delivery] = await target.waitFor(1);
    expect(verified(delivery!, secret)).toMatchObject({ type: 'operator.task.succeeded.v1', data: { object: task } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(1);
  });

  it('delivers only to endpoints covering the Space: org-wide ones see all, a Space endpoint only its own', async () => {
    const wide = await receiver();
    const narrow = await receiver();
    const { tenant, api, secret } = await subscribe(wide.url);
    const otherSpace = await tenant.newSpace();
    const created = await api('POST', '/v1/webhook_endpoints', { url: narrow.url, space_id: otherSpace });
    expect(created.status).toBe(201);
    await emit(deviceEvent(tenant)); // tenant.spaceId
    await emit({ ...deviceEvent(tenant), spaceId: otherSpace });
    await wide.waitFor(2);
    const [only] = await narrow.waitFor(1);
    expect(verified(only!, created.body.secret).space_id).toBe(otherSpace);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(narrow.received).toHaveLength(1);
    expect(wide.received.map((d) => verified(d, secret).space_id).sort()).toEqual([tenant.spaceId, otherSpace].sort());
  });

  it('sends a device created through POST /v1/devices, signed', { timeout: 60_000 }, async (context) => {
    if (!existsSync(CHROMIUM)) context.skip();
    const target = await receiver();
    const { tenant, secret } = await subscribe(target.url, { event_types: ['operator.device.created.v1'] });
    const devicesApi = apiClient(test.url, await tenant.key(['operator:devices:write']));
    const device = await devicesApi('POST', '/v1/devices', { space_id: tenant.spaceId });
    expect(device.status).toBe(201);
    try {
      const [delivery] = await target.waitFor(1);
      expect(verified(delivery!, secret)).toMatchObject({ type: 'operator.device.created.v1', data: { object: { id: device.body.id, object: 'device' } } });
    } finally {
      await devicesApi('DELETE', `/v1/devices/${device.body.id}`);
    }
  });
  it('sends a task finished through the API (device, task, worker), signed', { timeout: 90_000 }, async (context) => {
    if (!existsSync(CHROMIUM)) context.skip();
    const page = await receiver((res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Webhook page</title>'));
    const target = await receiver();
    const { tenant, secret } = await subscribe(target.url, { event_types: ['operator.task.succeeded.v1', 'operator.task.failed.v1'] });
    const call = apiClient(test.url, await tenant.key(['operator:devices:write', 'operator:tasks:write']));
    const device = await call('POST', '/v1/devices', { space_id: tenant.spaceId });
    expect(device.status).toBe(201);
    try {
      const task = await call('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${page.url} then return the title` });
      expect(task.status).toBe(202);
      const [delivery] = await target.waitFor(1, 60_000);
      expect(verified(delivery!, secret)).toMatchObject({
        type: 'operator.task.succeeded.v1',
        data: { object: { id: task.body.id, object: 'task', status: 'succeeded', result: 'Webhook page' } },
      });
    } finally {
      await call('DELETE', `/v1/devices/${device.body.id}`);
    }
  });
});

describe('at-least-once', () => {
  it('retries a 500 and delivers the same envelope id again, with a new delivery id', async () => {
    const target = await receiver((res, index) => res.writeHead(index === 0 ? 500 : 200).end('body never read'));
    const { tenant, api, endpoint, secret } = await subscribe(target.url);
    await emit(deviceEvent(tenant));
    const [first, second] = await target.waitFor(2);
    expect(verified(first!, secret).id).toBe(verified(second!, secret).id);
    expect(first!.rawBody.equals(second!.rawBody)).toBe(true);
    expect(first!.headers['x-service-delivery']).not.toBe(second!.headers['x-service-delivery']);
    const settled = await waitForEndpoint(api, endpoint.id, (e) => e.last_success_at !== null);
    expect(settled).toMatchObject({ failure_count: 0, last_error: 'http_500' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(2);
  });

  it('counts a 3xx as a failure and never follows it', async () => {
    const elsewhere = await receiver();
    const target = await receiver((res, index) => {
      if (index === 0) res.writeHead(302, { location: elsewhere.url }).end();
      else res.writeHead(200).end();
    });
    const { tenant, api, endpoint } = await subscribe(target.url);
    await emit(deviceEvent(tenant));
    await target.waitFor(2);
    const settled = await waitForEndpoint(api, endpoint.id, (e) => e.last_success_at !== null);
    expect(settled.last_error).toBe('redirect');
    expect(elsewhere.received).toHaveLength(0);
  });

  it('never lets a rolled-back change leave an event or a delivery', async () => {
    const target = await receiver();
    const { tenant } = await subscribe(target.url);
    const db = test.service.services.db;
    await expect(
      db.transaction(async (tx) => {
        await emitEvent(tx, deviceEvent(tenant));
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');
    expect(await db.select().from(events).where(eq(events.orgId, tenant.orgId))).toHaveLength(0);
    expect(await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.orgId, tenant.orgId))).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(0);
  });
});

describe('auto-disable', () => {
  it('disables after 20 consecutive failures, delivers nothing while disabled, and PATCH enabled:true re-enables', async () => {
    let healthy = false;
    const target = await receiver((res) => res.writeHead(healthy ? 200 : 503).end());
    const { tenant, api, endpoint, secret } = await subscribe(target.url);
    await emit(deviceEvent(tenant));
    const disabled = await waitForEndpoint(api, endpoint.id, (e) => !e.enabled, 20_000);
    expect(disabled).toMatchObject({ enabled: false, failure_count: 20, last_error: 'http_503', disabled_at: expect.any(String) });
    expect(target.received).toHaveLength(20);

    const audit = await api('GET', `/v1/audit?action=operator.webhook.disabled.v1&resource_id=${endpoint.id}`);
    expect(audit.body.data).toEqual([
      expect.objectContaining({ actor: 'system', resource_type: 'webhook_endpoint', details: { failure_count: 20, last_error: 'http_503' } }),
    ]);

    await emit(deviceEvent(tenant, 'operator.device.slept.v1')); // while disabled: never delivered
    healthy = true;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(20);

    const enabled = await api('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { enabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ enabled: true, failure_count: 0, disabled_at: null });
    expect(enabled.body.secret).toBeUndefined();
    await emit(deviceEvent(tenant, 'operator.device.woke.v1'));
    const deliveries = await target.waitFor(21);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(21);
    expect(verified(deliveries[20]!, secret).type).toBe('operator.device.woke.v1');
  });
});

describe('audit-only events', () => {
  it('never delivers operator.webhook.*: endpoint changes write no outbox event, and a forged one is not sent', async () => {
    const target = await receiver();
    const { tenant, api, endpoint, secret } = await subscribe(target.url);
    const second = await api('POST', '/v1/webhook_endpoints', { url: target.url, description: 'second' });
    await api('PATCH', `/v1/webhook_endpoints/${second.body.id}`, { description: 'renamed' });
    await api('DELETE', `/v1/webhook_endpoints/${second.body.id}`);
    await api('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { description: 'still here' });
    const db = test.service.services.db;
    expect(await db.select().from(events).where(and(eq(events.orgId, tenant.orgId), like(events.type, 'operator.webhook.%')))).toHaveLength(0);

    // Written past emitEvent's types, as a bug elsewhere might: the worker still refuses it.
    const [forged] = await db
      .insert(events)
      .values({ orgId: tenant.orgId, spaceId: null, type: 'operator.webhook.created.v1', envelope: { id: 'evt_forged', type: 'operator.webhook.created.v1' } })
      .returning();
    await db.insert(webhookDeliveries).values({ eventId: forged!.id, endpointId: endpoint.id.slice(4), orgId: tenant.orgId });
    await emit(deviceEvent(tenant)); // a marker that must arrive
    await target.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received.map((d) => verified(d, secret).type)).toEqual(['operator.device.created.v1']);
    const audit = await api('GET', `/v1/audit?resource_id=${second.body.id}`);
    expect(audit.body.data.map((e: any) => e.action).sort()).toEqual([
      'operator.webhook.created.v1',
      'operator.webhook.deleted.v1',
      'operator.webhook.updated.v1',
    ]);
    expect(JSON.stringify(audit.body)).not.toContain('whsec_');
  });
});

describe('restart', () => {
  it('redelivers an attempt that was in flight when the server stopped', async () => {
    const target = await receiver((res, index) => {
      if (index > 0) res.writeHead(200).end();
      // The first request is held open: the server stops while it waits.
    });
    const { tenant, secret } = await subscribe(target.url);
    await emit(deviceEvent(tenant));
    await target.waitFor(1);
    await test.restart();
    const [first, second] = await target.waitFor(2, 15_000);
    expect(verified(second!, secret).id).toBe(verified(first!, secret).id);
  });
});
