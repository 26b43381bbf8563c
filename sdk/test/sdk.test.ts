import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  OperatorClient,
  OperatorError,
  PermissionDeniedError,
  type Step,
} from '@browser-device-operator/sdk';
import { startTaskPages, type TaskPages } from '../../test/support/task-pages';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../../test/support/test-service';

// The SDK against the real service (real PostgreSQL, real Chromium, offline planner).

let test: TestService;
let tenant: TestTenant;
let pages: TaskPages;
let operator: OperatorClient;

beforeAll(async () => {
  pages = await startTaskPages();
  test = await startTestService();
  tenant = await createTenant(test);
  operator = new OperatorClient({ apiKey: await tenant.key(allScopes), baseUrl: test.url });
});
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

const formPrompt = () =>
  `go to ${pages.url('/form')} then type "ada@example.com" into "Email" then click "Submit" then wait for "Welcome" then return the text of "#message"`;

describe('the README journey with the SDK', () => {
  it('creates a device, runs a task to the end while printing its steps, pages through devices, sleeps, wakes and deletes', async () => {
    const whoami = await operator.whoami();
    expect(whoami.product).toBe('operator');

    const device = await operator.devices.create({ space_id: tenant.spaceId, name: 'journey' });
    expect(device).toMatchObject({ object: 'device', status: 'active', name: 'journey' });

    const steps: Step[] = [];
    const task = await operator.tasks.run(device.id, formPrompt(), { onStep: (step) => steps.push(step) });
    expect(task.status).toBe('succeeded');
    expect(task.result).toBe('Welcome, ada@example.com');
    expect(steps.length).toBeGreaterThan(3);
    expect(steps.map((step) => step.seq)).toEqual(steps.map((_, index) => index + 1));
    expect(await operator.tasks.get(task.id)).toEqual(task);
    // Each step's screenshot, as bytes: a JPEG; a missing one is a typed 404.
    const jpeg = await operator.tasks.stepScreenshot(task.id, steps[0]!.seq);
    expect(jpeg).toBeInstanceOf(Uint8Array);
    expect([...jpeg.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    await expect(operator.tasks.stepScreenshot(task.id, 999)).rejects.toMatchObject({ status: 404, code: 'screenshot_not_found' });

    const others = [await operator.devices.create({ space_id: tenant.spaceId }), await operator.devices.create({ space_id: tenant.spaceId })];
    const firstPage = await operator.devices.list({ limit: 2 });
    expect(firstPage.data).toHaveLength(2);
    expect(firstPage.next_cursor).not.toBe('');
    const all = await operator.devices.list({ limit: 2 }).toArray();
    expect(all.map((item) => item.id).sort()).toEqual([device.id, ...others.map((item) => item.id)].sort());

    expect((await operator.devices.sleep(device.id)).status).toBe('sleeping');
    expect((await operator.devices.wake(device.id)).status).toBe('active');
    for (const item of [device, ...others]) expect((await operator.devices.delete(item.id)).status).toBe('terminated');
  });
});

describe('task caches with the SDK', () => {
  it('runs with a cache_key (a miss, then a hit), lists, gets and deletes the entry', async () => {
    const device = await operator.devices.create({ space_id: tenant.spaceId });
    const first = await operator.tasks.run(device.id, formPrompt(), { cache_key: 'sdk.form' });
    expect(first).toMatchObject({ status: 'succeeded', cache: { key: 'sdk.form', outcome: 'miss' } });
    const steps: Step[] = [];
    const second = await operator.tasks.run(device.id, formPrompt(), { cache_key: 'sdk.form', onStep: (step) => steps.push(step) });
    expect(second).toMatchObject({ status: 'succeeded', result: 'Welcome, ada@example.com', cache: { outcome: 'hit' }, usage: { model_calls: 0, replayed_steps: 5 } });
    expect(steps.filter((step) => step.type === 'action').every((step) => step.replayed)).toBe(true);

    const [entry] = (await operator.taskCaches.list({ space_id: tenant.spaceId }).toArray()).filter((item) => item.key === 'sdk.form');
    expect(entry).toMatchObject({ object: 'task_cache', hits: 1, prompt: formPrompt() });
    expect((await operator.taskCaches.get(entry!.id)).id).toBe(entry!.id);
    await operator.taskCaches.delete(entry!.id);
    await expect(operator.taskCaches.get(entry!.id)).rejects.toBeInstanceOf(NotFoundError);
    await operator.devices.delete(device.id);
  });
});

describe('credentials', () => {
  it('stores, lists, rotates and deletes a credential, takes a pushed code, and never returns a value', async () => {
    const created = await operator.credentials.create({ name: 'sdk-bank', space_id: tenant.spaceId, domains: ['example.com'], username: 'ada', password: 'sdk-Secret-1' });
    expect(created).toMatchObject({ object: 'credential', name: 'sdk-bank', username: 'ada', has_password: true, has_totp: false });
    const rotated = await operator.credentials.update(created.id, { password: 'sdk-Secret-2', totp_secret: 'JBSWY3DPEHPK3PXP' });
    expect(rotated).toMatchObject({ has_password: true, has_totp: true });
    expect((await operator.credentials.list({ space_id: tenant.spaceId }).toArray()).map((item) => item.id)).toContain(created.id);
    expect(await operator.credentials.pushCode(created.id, '123456')).toMatchObject({ object: 'credential_code', credential_id: created.id });
    expect(JSON.stringify(await operator.credentials.get(created.id))).not.toContain('sdk-Secret');
    await expect(operator.credentials.create({ name: 'sdk-bank', space_id: tenant.spaceId, domains: ['example.com'] })).rejects.toBeInstanceOf(ConflictError);
    await operator.credentials.delete(created.id);
    await expect(operator.credentials.get(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('typed errors', () => {
  it('throws classes carrying code, status, request_id and param', async () => {
    const notFound = await operator.devices.get('dev_nope').catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(NotFoundError);
    expect(notFound).toBeInstanceOf(OperatorError);
    expect(notFound).toMatchObject({ code: 'device_not_found', status: 404 });
    expect((notFound as OperatorError).request_id).toMatch(/^req_/);

    const invalid = await operator.devices.create({ space_id: tenant.spaceId, idle_suspend_secs: 5 }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect(invalid).toMatchObject({ code: 'invalid_request', status: 400, param: 'idle_suspend_secs' });

    const badKey = new OperatorClient({ apiKey: 'svc_operator_test_aaaaaaaaaaaa_nope', baseUrl: test.url });
    await expect(badKey.devices.list()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(badKey.devices.list()).rejects.toMatchObject({ code: 'invalid_api_key', status: 401 });

    const readOnly = new OperatorClient({ apiKey: await tenant.key(['operator:devices:read']), baseUrl: test.url });
    await expect(readOnly.devices.create({ space_id: tenant.spaceId })).rejects.toBeInstanceOf(PermissionDeniedError);

    const device = await operator.devices.create({ space_id: tenant.spaceId });
    const task = await operator.tasks.run(device.id, `go to ${pages.url('/plain')} then return the title`);
    const late = await operator.tasks.cancel(task.id).catch((error: unknown) => error);
    expect(late).toBeInstanceOf(ConflictError);
    expect(late).toMatchObject({ code: 'task_not_cancelable', status: 409 });
    await operator.devices.delete(device.id);
  });
});

describe('sessions.connect()', () => {
  it('yields frames of the page and sends input during a takeover, which the task then sees', async () => {
    const device = await operator.devices.create({ space_id: tenant.spaceId });
    const session = await operator.sessions.create(device.id, { mode: 'control' });
    // ws_url is built from OPERATOR_PUBLIC_URL; the test server listens on another port.
    const reachable = { ...session, ws_url: `${test.url.replace('http', 'ws')}${new URL(session.ws_url).pathname}` };
    const refusals: string[] = [];
    const watching = operator.sessions.connect(reachable);
    watching.onRefusal = (refusal) => refusals.push(refusal.code);
    expect(await watching.ready).toMatchObject({ type: 'ready', session_id: session.id, device_id: device.id });
    const first = (await watching[Symbol.asyncIterator]().next()).value!;
    expect(first.format).toBe('jpeg');
    expect(Buffer.from(first.data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    await watching.send({ kind: 'click', x: 150, y: 60 });
    await expect.poll(() => refusals).toEqual(['input_not_allowed']);
    watching.close();

    // A task waiting at a lock only a human opens: take over, click, release.
    const task = await operator.tasks.submit(device.id, { prompt: `go to ${pages.url('/takeover')} then wait for "Unlocked" then return the text of "#status"` });
    for await (const event of operator.tasks.events(task.id)) if (event.type === 'step') break;
    expect(await operator.sessions.takeOver(session.id)).toMatchObject({ paused: true, task_id: task.id });
    const driving = operator.sessions.connect(reachable);
    driving.onRefusal = (refusal) => refusals.push(refusal.code);
    await driving[Symbol.asyncIterator]().next();
    await driving.send({ kind: 'click', x: 150, y: 60 });
    // Inputs are applied in order: once this one is refused, the click was applied.
    await driving.send({ kind: 'key', key: 'NotAKey' });
    await expect.poll(() => refusals).toEqual(['input_not_allowed', 'invalid_input']);
    await operator.sessions.release(session.id);
    let done: unknown;
    for await (const event of operator.tasks.events(task.id)) if (event.type === 'done') done = event.task;
    expect(done).toMatchObject({ status: 'succeeded', result: 'Unlocked' });
    driving.close();
    await operator.devices.delete(device.id);
  });
});

/**
 * A TCP proxy to the service that cuts the first event-stream connection right after the
 * first `step` frame it carries, as a dropped connection or a restarted server would.
 */
async function startCuttingProxy(target: string) {
  const { hostname, port } = new URL(target);
  const eventRequests: string[] = [];
  let cut = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    let isEvents = false;
    let seen = '';
    client.on('data', (chunk) => {
      const text = chunk.toString('latin1');
      const line = /^GET (\S*\/events\S*) HTTP/m.exec(text);
      if (line !== null) {
        isEvents = true;
        eventRequests.push(line[1]!);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!isEvents || cut) return void client.write(chunk);
      seen += chunk.toString('latin1');
      const step = seen.indexOf('event: step');
      const end = step < 0 ? -1 : seen.indexOf('\n\n', step);
      if (end < 0) return void client.write(chunk);
      // Forward up to the end of the first step frame, then drop both sides.
      const already = seen.length - chunk.length;
      client.write(chunk.subarray(0, end + 2 - already));
      cut = true;
      client.destroy();
      upstream.destroy();
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    eventRequests,
    wasCut: () => cut,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('tasks.events()', () => {
  it('resumes with after_seq after the connection drops, neither repeating nor skipping a step', async () => {
    const proxy = await startCuttingProxy(test.url);
    try {
      const client = new OperatorClient({ apiKey: await tenant.key(allScopes), baseUrl: proxy.url });
      const device = await client.devices.create({ space_id: tenant.spaceId });
      const task = await client.tasks.submit(device.id, { prompt: formPrompt() });
      const seqs: number[] = [];
      let done: unknown;
      for await (const event of client.tasks.events(task.id)) {
        if (event.type === 'step') seqs.push(event.step.seq);
        else done = event.task;
      }
      expect(proxy.wasCut()).toBe(true);
      expect(proxy.eventRequests.length).toBeGreaterThanOrEqual(2);
      expect(proxy.eventRequests[0]).toContain('after_seq=0');
      expect(proxy.eventRequests[1]).toContain('after_seq=1');
      expect(seqs).toEqual(seqs.map((_, index) => index + 1));
      expect(seqs.length).toBeGreaterThan(3);
      expect(done).toMatchObject({ id: task.id, status: 'succeeded' });
      await client.devices.delete(device.id);
    } finally {
      await proxy.close();
    }
  });
});

describe('retries', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({ OPERATOR_RATE_LIMIT_PER_SEC: '1', OPERATOR_RATE_LIMIT_BURST: '1' });
  });
  afterAll(() => limited?.stop());

  it('retries a 429 after Retry-After with the same Idempotency-Key, creating one device', async () => {
    const org = await createTenant(limited);
    const attempts: Array<{ method: string; path: string; key: string | null; status: number }> = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request.clone());
      attempts.push({ method: request.method, path: new URL(request.url).pathname, key: request.headers.get('idempotency-key'), status: response.status });
      return response;
    };
    const client = new OperatorClient({ apiKey: await org.key(allScopes), baseUrl: limited.url, fetch: recordingFetch });
    await client.whoami(); // spends the key's one-request burst
    const device = await client.devices.create({ space_id: org.spaceId });

    const creates = attempts.filter((attempt) => attempt.method === 'POST' && attempt.path === '/v1/devices');
    expect(creates.map((attempt) => attempt.status)).toEqual([429, 201]);
    expect(creates[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(creates[1]!.key).toBe(creates[0]!.key);
    const listed = await client.devices.list().toArray();
    expect(listed.map((item) => item.id)).toEqual([device.id]);
    await client.devices.delete(device.id);
  });

  it('gives up after maxRetries with a RateLimitError carrying retryAfter', async () => {
    const org = await createTenant(limited);
    const client = new OperatorClient({ apiKey: await org.key(allScopes), baseUrl: limited.url, retry: { maxRetries: 0 } });
    await client.whoami();
    const error = await client.whoami().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'RateLimitError', code: 'rate_limited', status: 429 });
    expect((error as OperatorError).retryAfter).toBeGreaterThanOrEqual(1);
  });
});
