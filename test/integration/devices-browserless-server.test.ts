import { readdir } from 'node:fs/promises';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { deviceStates } from '../../db/schema';
import { startPageServer, type PageServer } from '../support/browser-fixtures';
import { parsePublicId } from '../../server/domain/ids';
import type { RunningService } from '../../server/assembly/start-service';
import { startBrowserlessServer, type BrowserlessServer } from '../support/browserless-server';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { allScopes, createTenant, startAnotherInstance, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { deviceCoreSuite } from './devices-core-suite';

// Devices on a real browserless 2.x server that runs one browser at a time (CONCURRENT=1,
// QUEUED=0): the device journey, a task, live view with takeover, a full pool, and the
// device's cookies and localStorage across sleep, wake and instances. One server for the
// whole file; each test deletes its devices, so the one browser is free for the next.

let browserless: BrowserlessServer;

beforeAll(async () => {
  browserless = await startBrowserlessServer({ concurrent: 1, queued: 0 });
});
afterAll(async () => {
  await browserless?.stop();
});

const browserlessEnv = () => ({ OPERATOR_BROWSER: 'browserless', BROWSERLESS_URL: browserless.url });

deviceCoreSuite('a real browserless server', { local: false, env: async () => browserlessEnv() });

describe('devices on a real browserless server', () => {
  let test: TestService;
  let second: RunningService;
  let tenant: TestTenant;
  let api: ApiCall;
  let onSecond: ApiCall;
  let pages: PageServer;
  let taskPages: TaskPages;
  const devices = new DeviceTracker(() => api);

  beforeAll(async () => {
    pages = await startPageServer();
    taskPages = await startTaskPages();
    test = await startTestService(browserlessEnv());
    second = await startAnotherInstance(test);
    tenant = await createTenant(test);
    const key = await tenant.key(allScopes);
    api = apiClient(test.url, key);
    onSecond = apiClient(second.url, key);
  });
  afterEach(() => devices.deleteAll());
  afterAll(async () => {
    await second?.close();
    await test?.stop();
    await pages?.close();
    await taskPages?.close();
  });

  async function runTask(call: ApiCall, device: string, prompt: string): Promise<any> {
    const submitted = await call('POST', `/v1/devices/${device}/tasks`, { prompt });
    expect(submitted.status).toBe(202);
    return waitForTaskEnd(call, submitted.body.id);
  }

  it('is ready while the browserless endpoint accepts its token, and not with a wrong one', async () => {
    const ready = await fetch(`${test.url}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 200, body: { ok: true } });
    const wrongToken = await startTestService({ ...browserlessEnv(), BROWSERLESS_URL: browserless.url.replace(/token=[^&]+/, 'token=wrong') });
    try {
      const refused = await fetch(`${wrongToken.url}/readyz`);
      expect({ status: refused.status, body: await refused.json() }).toEqual({ status: 503, body: { ok: false, reason: 'browser_provider_unreachable' } });
    } finally {
      await wrongToken.stop();
    }
  });

  it('runs a task on the remote browser', async () => {
    const device = await devices.create(tenant.spaceId);
    const task = await runTask(api, device, `go to ${pages.url('/form')} then type "Ada" into "Full name" then click "Say hello" then return the text of "#out"`);
    expect(task).toMatchObject({ status: 'succeeded', result: 'Hello clicked' });
  });

  it('streams the page to a live view, and relays a takeover click that lets the task finish', async () => {
    const device = await devices.create(tenant.spaceId);
    const control = (await api('POST', `/v1/devices/${device}/sessions`, { mode: 'control' })).body;
    const submitted = await api('POST', `/v1/devices/${device}/tasks`, {
      prompt: `go to ${taskPages.url('/takeover')} then wait for "Unlocked" then return the text of "#status"`,
    });
    // Past the navigation (its step is recorded), the agent is inside its `wait for`.
    await until(async () => {
      const [row] = await test.service.services.db.execute<{ n: number }>(
        sql`select count(*)::int as n from task_steps where task_id = ${parsePublicId('task', submitted.body.id)}`,
      );
      return row!.n >= 1;
    });
    expect((await api('POST', `/v1/sessions/${control.id}/takeover`, {})).status).toBe(200);

    const socket = new WebSocket(`${test.url.replace('http', 'ws')}${new URL(control.ws_url).pathname}`, ['svc.operator.v1', `svc.token.${control.session_token}`]);
    const messages: any[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    await until(async () => messages.some((message) => message.type === 'frame'));
    const frame = messages.find((message) => message.type === 'frame');
    expect(Buffer.from(frame.data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(frame.width).toBeGreaterThan(0);
    expect(frame.height).toBeGreaterThan(0);
    socket.send(JSON.stringify({ type: 'input', input: { kind: 'click', x: 150, y: 60 } }));

    expect((await api('POST', `/v1/sessions/${control.id}/release`)).status).toBe(202);
    expect(await waitForTaskEnd(api, submitted.body.id)).toMatchObject({ status: 'succeeded', result: 'Unlocked' });
    socket.close();
  });

  it('answers 503 capacity_exhausted with Retry-After within 2 s when the pool is full, on create and on wake', async () => {
    const asleep = await devices.create(tenant.spaceId);
    expect((await api('POST', `/v1/devices/${asleep}/sleep`)).status).toBe(202);
    // The pool's one browser now serves another device: OPERATOR_MAX_BROWSERS (10) has
    // room, the remote pool has none.
    const holder = await devices.create(tenant.spaceId);

    const refusedCreate = await timed(() => api('POST', '/v1/devices', { space_id: tenant.spaceId }));
    const refusedWake = await timed(() => api('POST', `/v1/devices/${asleep}/wake`));
    for (const { response, ms } of [refusedCreate, refusedWake]) {
      expect(response.status).toBe(503);
      expect(response.body.error.code).toBe('capacity_exhausted');
      expect(response.headers.get('retry-after')).toBe('30');
      expect(ms).toBeLessThan(2_000);
    }
    expect((await api('GET', `/v1/devices/${asleep}`)).body.status).toBe('sleeping');
    const listed = await api('GET', '/v1/devices?limit=100');
    expect(listed.body.data.filter((device: any) => device.status !== 'terminated').map((device: any) => device.id).sort()).toEqual([asleep, holder].sort());

    expect((await api('DELETE', `/v1/devices/${holder}`)).status).toBe(202);
    expect((await api('POST', `/v1/devices/${asleep}/wake`)).body.status).toBe('active');
  });

  it('keeps cookies and localStorage across sleep and wake, and when another instance wakes the device (which then serves its tasks and, relayed, its live view); nothing is left once it is deleted', async () => {
    const device = await devices.create(tenant.spaceId);
    const set = await runTask(api, device, `go to ${pages.url('/set-cookie')} then go to ${pages.url('/set-storage')} then return the title`);
    expect(set).toMatchObject({ status: 'succeeded', result: 'Storage set' });
    const readBack = async (call: ApiCall) => ({
      cookie: (await runTask(call, device, `go to ${pages.url('/show-cookie')} then return the text of "#cookie"`)).result,
      storage: (await runTask(call, device, `go to ${pages.url('/show-storage')} then return the text of "#storage"`)).result,
    });

    expect((await api('POST', `/v1/devices/${device}/sleep`)).status).toBe(202);
    expect((await api('POST', `/v1/devices/${device}/wake`)).body.status).toBe('active');
    expect(await readBack(api)).toEqual({ cookie: 'device_session=kept', storage: 'kept' });

    // The second instance has its own data directory: only the database carries the state.
    expect((await api('POST', `/v1/devices/${device}/sleep`)).status).toBe(202);
    expect((await onSecond('POST', `/v1/devices/${device}/wake`)).body.status).toBe('active');
    const id = parsePublicId('device', device)!;
    expect(second.services.browserPool.get(id)).toBeDefined();
    expect(test.service.services.browserPool.get(id)).toBeUndefined();
    expect(await readBack(onSecond)).toEqual({ cookie: 'device_session=kept', storage: 'kept' });

    // A live view asked of the first instance is relayed to the second, which now holds the browser.
    const watch = (await api('POST', `/v1/devices/${device}/sessions`, {})).body;
    const socket = new WebSocket(`${test.url.replace('http', 'ws')}${new URL(watch.ws_url).pathname}`, ['svc.operator.v1', `svc.token.${watch.session_token}`]);
    const frames: any[] = [];
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString());
      if (message.type === 'frame') frames.push(message);
    });
    await until(async () => frames.length > 0);
    expect(Buffer.from(frames[0].data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    socket.close();

    expect((await onSecond('DELETE', `/v1/devices/${device}`)).status).toBe(202);
    const db = test.service.services.db;
    // The delete answers once the device is terminated; its saved state goes right after.
    await until(async () => (await db.select().from(deviceStates).where(eq(deviceStates.deviceId, id))).length === 0);
    // browserless deletes the temporary profile of a browser once it has closed it.
    await until(async () => (await readdir(browserless.dataDir)).length === 0);
  });
});

async function timed<T>(work: () => Promise<T>): Promise<{ response: T; ms: number }> {
  const started = Date.now();
  const response = await work();
  return { response, ms: Date.now() - started };
}

async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
