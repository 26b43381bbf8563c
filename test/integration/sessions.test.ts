import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { events, sessions } from '../../db/schema';
import { parsePublicId } from '../../server/domain/ids';
import { hashSecret } from '../../server/domain/secret-hash';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// Live-view sessions end to end: mint, the WebSocket gateway (frames, input rules),
// takeover and release around a running task, hold lapse, revocation, metering.

const PUBLIC_URL = 'https://operator.example';
const HOLD_SECS = 3;

let test: TestService;
let tenant: TestTenant;
let pages: TaskPages;
let api: ApiCall;
let key: string;
const devices = new DeviceTracker(() => api);

beforeAll(async () => {
  pages = await startTaskPages();
  test = await startTestService({ OPERATOR_PUBLIC_URL: PUBLIC_URL, OPERATOR_TAKEOVER_HOLD_SECS: String(HOLD_SECS) });
  tenant = await createTenant(test);
  key = await tenant.key(allScopes);
  api = apiClient(test.url, key);
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

const newDevice = () => devices.create(tenant.spaceId);

async function mint(device: string, body: Record<string, unknown> = {}): Promise<any> {
  const minted = await api('POST', `/v1/devices/${device}/sessions`, body);
  expect(minted.status).toBe(201);
  return minted.body;
}

/** The gateway URL on the test server: ws_url's path, on the address the test can reach. */
function gatewayUrl(session: { ws_url: string }): string {
  return `${test.url.replace('http', 'ws')}${new URL(session.ws_url).pathname}`;
}

interface OpenSocket {
  socket: WebSocket;
  messages: any[];
  /** Resolves with the first message (already received or future) that matches. */
  next(match: (message: any) => boolean, timeoutMs?: number): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
}

function connect(session: { ws_url: string }, protocols: string[]): Promise<OpenSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(gatewayUrl(session), protocols);
    const messages: any[] = [];
    const waiters: Array<() => void> = [];
    socket.on('message', (data) => {
      messages.push(JSON.parse(data.toString()));
      waiters.splice(0).forEach((wake) => wake());
    });
    const closed = new Promise<{ code: number; reason: string }>((done) => socket.on('close', (code, reason) => done({ code, reason: reason.toString() })));
    socket.on('unexpected-response', (_request, response) => reject(Object.assign(new Error(`handshake ${response.statusCode}`), { status: response.statusCode })));
    socket.on('error', reject);
    socket.on('open', () =>
      resolve({
        socket,
        messages,
        closed,
        async next(match, timeoutMs = 5_000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const found = messages.find(match);
            if (found !== undefined) return found;
            if (Date.now() > deadline) throw new Error(`no matching message in ${timeoutMs} ms; got ${JSON.stringify(messages.map((m) => m.type))}`);
            await new Promise<void>((wake) => {
              const timer = setTimeout(wake, 100);
              waiters.push(() => {
                clearTimeout(timer);
                wake();
              });
            });
          }
        },
      }),
    );
  });
}

const protocolsFor = (session: { session_token: string }) => ['svc.operator.v1', `svc.token.${session.session_token}`];

async function handshakeStatus(session: { ws_url: string }, protocols: string[]): Promise<number> {
  try {
    const open = await connect(session, protocols);
    open.socket.close();
    return 101;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

/** A running task that waits at the locked page until a human unlocks it. */
async function taskAtTheWall(device: string): Promise<string> {
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, {
    prompt: `go to ${pages.url('/takeover')} then wait for "Unlocked" then return the text of "#status"`,
  });
  expect(submitted.status).toBe(202);
  // Past the navigation: the agent is inside its `wait for`.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    // Steps are recorded once an action completes; step 1 is the navigation.
    const [row] = await test.service.services.db.execute<{ n: number }>(
      sql`select count(*)::int as n from task_steps where task_id = ${parsePublicId('task', submitted.body.id)}`,
    );
    if (row!.n >= 1) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return submitted.body.id;
}

describe('minting sessions', () => {
  it('mints a session with a one-time token, a wss ws_url on the API origin and a clamped lifetime', async () => {
    const device = await newDevice();
    const session = await mint(device);
    expect(session).toMatchObject({ object: 'session', device_id: device, mode: 'watch', revoked_at: null });
    expect(session.id).toMatch(/^ses_[0-9a-f-]{36}$/);
    expect(session.session_token).toMatch(/^sestok_[A-Za-z0-9_-]{43}$/);
    expect(session.ws_url).toBe(`wss://operator.example/v1/sessions/${session.id}/ws`);
    const lifetime = (s: any) => (Date.parse(s.expires_at) - Date.parse(s.created_at)) / 1000;
    expect(lifetime(session)).toBe(900);
    expect(lifetime(await mint(device, { ttl_secs: 5 }))).toBe(60);
    expect(lifetime(await mint(device, { ttl_secs: 999_999 }))).toBe(3600);

    const read = await api('GET', `/v1/sessions/${session.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual((({ session_token: _token, ...rest }) => rest)(session));
    const [row] = await test.service.services.db.select().from(sessions).where(eq(sessions.id, parsePublicId('session', session.id)!));
    expect(row!.tokenHash).toBe(hashSecret(session.session_token));
    expect(JSON.stringify(row)).not.toContain(session.session_token);
    const created = await test.service.services.db.select().from(events).where(eq(events.type, 'operator.session.created.v1'));
    const envelope = created.find((event) => (event.envelope as any).data.object.id === session.id)!.envelope as any;
    expect(envelope.data.object.session_token).toBeUndefined();
  });

  it('refuses control without operator:sessions:control, bad bodies, and devices that are not active', async () => {
    const device = await newDevice();
    const watchOnly = apiClient(test.url, await tenant.key(['operator:sessions:write']));
    expect((await watchOnly('POST', `/v1/devices/${device}/sessions`, { mode: 'control' })).body.error.code).toBe('insufficient_scope');
    expect((await watchOnly('POST', `/v1/devices/${device}/sessions`, {})).status).toBe(201);
    for (const body of [{ mode: 'edit' }, { ttl_secs: 'long' }, { ttl_secs: 1.5 }, { extra: true }]) {
      const response = await api('POST', `/v1/devices/${device}/sessions`, body);
      expect({ body, status: response.status, code: response.body.error?.code }).toEqual({ body, status: 400, code: 'invalid_request' });
    }
    expect((await api('POST', `/v1/devices/${device}/sleep`)).status).toBe(202);
    expect((await api('POST', `/v1/devices/${device}/sessions`, {})).body.error.code).toBe('device_not_ready');
    expect((await api('DELETE', `/v1/devices/${device}`)).status).toBe(202);
    const terminated = await api('POST', `/v1/devices/${device}/sessions`, {});
    expect({ status: terminated.status, code: terminated.body.error.code }).toEqual({ status: 410, code: 'device_terminated' });
  });
});

describe('the gateway', () => {
  it('streams JPEG frames of the device page to a session presenting its token as a subprotocol', async () => {
    const device = await newDevice();
    const session = await mint(device);
    const open = await connect(session, protocolsFor(session));
    expect(open.socket.protocol).toBe('svc.operator.v1');
    expect(await open.next((message) => message.type === 'ready')).toEqual({ type: 'ready', session_id: session.id, device_id: device, mode: 'watch', expires_at: session.expires_at });
    const frame = await open.next((message) => message.type === 'frame');
    expect(Buffer.from(frame.data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(frame.width).toBeGreaterThan(0);
    expect(frame.height).toBeGreaterThan(0);
    open.socket.close();
  });

  it('refuses a handshake without the subprotocol, with a wrong, foreign or query-string token, and for unknown ids', async () => {
    const device = await newDevice();
    const session = await mint(device);
    const other = await mint(device);
    expect(await handshakeStatus(session, [`svc.token.${session.session_token}`])).toBe(401);
    expect(await handshakeStatus(session, ['svc.operator.v1'])).toBe(401);
    expect(await handshakeStatus(session, ['svc.operator.v1', `svc.token.sestok_${'A'.repeat(43)}`])).toBe(401);
    expect(await handshakeStatus(session, protocolsFor(other))).toBe(401);
    expect(await handshakeStatus({ ws_url: `${session.ws_url}?token=${session.session_token}` }, ['svc.operator.v1'])).toBe(401);
    expect(await handshakeStatus({ ws_url: session.ws_url.replace(session.id, 'ses_00000000-0000-4000-8000-000000000000') }, protocolsFor(session))).toBe(401);
    expect(await handshakeStatus(session, protocolsFor(session))).toBe(101);
  });

  it('never relays input from a watch session, nor from a control session without a takeover', async () => {
    const device = await newDevice();
    const watch = await mint(device);
    const control = await mint(device, { mode: 'control' });
    for (const session of [watch, control]) {
      const open = await connect(session, protocolsFor(session));
      await open.next((message) => message.type === 'ready');
      open.socket.send(JSON.stringify({ type: 'input', input: { kind: 'text', text: 'hello' } }));
      expect(await open.next((message) => message.type === 'error')).toMatchObject({ type: 'error', code: 'input_not_allowed' });
      open.socket.send('not json');
      expect(await open.next((message) => message.type === 'error' && message.code === 'invalid_message')).toBeDefined();
      open.socket.close();
    }
  });

  it('closes open sockets at once when the session is revoked, and refuses it afterwards with 410', async () => {
    const device = await newDevice();
    const session = await mint(device);
    const open = await connect(session, protocolsFor(session));
    await open.next((message) => message.type === 'ready');
    const started = Date.now();
    expect((await api('DELETE', `/v1/sessions/${session.id}`)).status).toBe(204);
    expect(await open.closed).toEqual({ code: 4410, reason: 'session_expired' });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await api('GET', `/v1/sessions/${session.id}`)).body.revoked_at).not.toBeNull();
    const again = await api('DELETE', `/v1/sessions/${session.id}`);
    expect({ status: again.status, code: again.body.error.code }).toEqual({ status: 410, code: 'session_expired' });
    expect(await handshakeStatus(session, protocolsFor(session))).toBe(410);
  });

  it('closes the sockets of a device that is deleted, and answers its sessions with device_terminated', async () => {
    const device = await newDevice();
    const session = await mint(device);
    const control = await mint(device, { mode: 'control' });
    const open = await connect(session, protocolsFor(session));
    await open.next((message) => message.type === 'ready');
    expect((await api('DELETE', `/v1/devices/${device}`)).status).toBe(202);
    expect((await open.closed).code).toBe(4409);
    expect(await handshakeStatus(session, protocolsFor(session))).toBe(410);
    const takeover = await api('POST', `/v1/sessions/${control.id}/takeover`, {});
    expect({ status: takeover.status, code: takeover.body.error.code }).toEqual({ status: 410, code: 'device_terminated' });
  });
});

describe('asking clients to reconnect', () => {
  it('closes the sockets of a device handed over with 1012 service_restart, leaves other devices alone, and the same token opens the view again', async () => {
    const [device, other] = [await newDevice(), await newDevice()];
    const session = await mint(device);
    const bystander = await mint(other);
    const open = await connect(session, protocolsFor(session));
    const watching = await connect(bystander, protocolsFor(bystander));
    await open.next((message) => message.type === 'frame');
    await watching.next((message) => message.type === 'ready');
    test.service.closeForDevice(parsePublicId('device', device)!, 'service_restart');
    expect(await open.closed).toEqual({ code: 1012, reason: 'service_restart' });
    const again = await connect(session, protocolsFor(session));
    expect(await again.next((message) => message.type === 'ready')).toMatchObject({ session_id: session.id });
    await again.next((message) => message.type === 'frame');
    expect(watching.socket.readyState).toBe(WebSocket.OPEN);
    again.socket.close();
    watching.socket.close();
  });

  it('closes every socket with 1012 service_restart at a graceful stop, and the session opens again on the next instance', async () => {
    const device = await newDevice();
    const session = await mint(device);
    const open = await connect(session, protocolsFor(session));
    await open.next((message) => message.type === 'ready');
    await test.restart();
    expect(await open.closed).toEqual({ code: 1012, reason: 'service_restart' });
    expect((await api('GET', `/v1/sessions/${session.id}`)).body.revoked_at).toBeNull();
    const again = await connect(session, protocolsFor(session));
    await again.next((message) => message.type === 'frame', 20_000);
    again.socket.close();
  });
});

describe('takeover and release', () => {
  it('pauses the agent, relays the human’s click, and resumes the task on release', async () => {
    const device = await newDevice();
    const watch = await mint(device);
    const control = await mint(device, { mode: 'control' });
    const rival = await mint(device, { mode: 'control' });
    const task = await taskAtTheWall(device);

    const notControl = await api('POST', `/v1/sessions/${watch.id}/takeover`, { reason: 'look' });
    expect({ status: notControl.status, code: notControl.body.error.code }).toEqual({ status: 409, code: 'session_not_control' });
    const taken = await api('POST', `/v1/sessions/${control.id}/takeover`, { reason: 'The agent is stuck at a lock' });
    expect(taken.status).toBe(200);
    expect(taken.body).toMatchObject({ paused: true, session_id: control.id, task_id: task });
    expect(Date.parse(taken.body.hold_expires_at)).toBeGreaterThan(Date.now());
    expect((await api('GET', `/v1/tasks/${task}`)).body.status).toBe('needs_human');
    expect((await api('POST', `/v1/sessions/${control.id}/takeover`, {})).body).toEqual(taken.body);
    const busy = await api('POST', `/v1/sessions/${rival.id}/takeover`, {});
    expect({ status: busy.status, code: busy.body.error.code }).toEqual({ status: 409, code: 'device_busy' });

    const open = await connect(control, protocolsFor(control));
    await open.next((message) => message.type === 'frame');
    open.socket.send(JSON.stringify({ type: 'input', input: { kind: 'click', x: 150, y: 60 } }));
    open.socket.send(JSON.stringify({ type: 'input', input: { kind: 'key', key: 'NotAKey' } }));
    expect(await open.next((message) => message.type === 'error')).toMatchObject({ code: 'invalid_input' });

    const released = await api('POST', `/v1/sessions/${control.id}/release`);
    expect(released.status).toBe(202);
    expect(released.body).toEqual({ resumed: true, session_id: control.id, task_id: task });
    expect(await waitForTaskEnd(api, task)).toMatchObject({ status: 'succeeded', result: 'Unlocked' });
    const again = await api('POST', `/v1/sessions/${control.id}/release`);
    expect({ status: again.status, code: again.body.error.code }).toEqual({ status: 409, code: 'no_running_task' });
    // After the release the session may watch but no longer drive.
    open.socket.send(JSON.stringify({ type: 'input', input: { kind: 'text', text: 'late' } }));
    expect(await open.next((message) => message.type === 'error' && message.code === 'input_not_allowed')).toBeDefined();
    open.socket.close();

    const audit = await api('GET', `/v1/audit?resource_id=${control.id}`);
    expect(audit.body.data.map((entry: any) => entry.action).sort()).toEqual(['operator.session.created', 'operator.session.released', 'operator.session.takeover']);
    expect(audit.body.data.find((entry: any) => entry.action === 'operator.session.takeover').details.reason).toBe('The agent is stuck at a lock');
    for (const type of ['operator.session.takeover.v1', 'operator.session.released.v1']) {
      const emitted = await test.service.services.db.select().from(events).where(eq(events.type, type));
      expect(emitted.map((event) => (event.envelope as any).data.object.id)).toContain(control.id);
    }
  });

  it('takes input sent the moment a takeover is answered, on a socket opened before it, though the change has not reached the gateway', async () => {
    const device = await newDevice();
    const control = await mint(device, { mode: 'control' });
    const task = await taskAtTheWall(device);
    const open = await connect(control, protocolsFor(control));
    await open.next((message) => message.type === 'frame');
    // The session as a takeover leaves it, written without the notice the gateway re-reads
    // sessions on: as when the answer reaches the client before the notice reaches the gateway.
    await test.service.services.db
      .update(sessions)
      .set({ holdTaskId: parsePublicId('task', task)!, holdExpiresAt: new Date(Date.now() + 60_000) })
      .where(eq(sessions.id, parsePublicId('session', control.id)!));
    open.socket.send(JSON.stringify({ type: 'input', input: { kind: 'click', x: 150, y: 60 } }));
    // The click unlocks the page, and the agent, waiting for that, finishes.
    expect(await waitForTaskEnd(api, task)).toMatchObject({ status: 'succeeded', result: 'Unlocked' });
    expect(open.messages.filter((message) => message.type === 'error')).toEqual([]);
    open.socket.close();
  });

  it('resumes the task by itself when the hold lapses', async () => {
    const device = await newDevice();
    const control = await mint(device, { mode: 'control' });
    const task = await taskAtTheWall(device);
    expect((await api('POST', `/v1/sessions/${control.id}/takeover`, {})).status).toBe(200);
    const open = await connect(control, protocolsFor(control));
    await open.next((message) => message.type === 'frame');
    open.socket.send(JSON.stringify({ type: 'input', input: { kind: 'click', x: 150, y: 60 } }));
    expect(await waitForTaskEnd(api, task, (HOLD_SECS + 20) * 1000)).toMatchObject({ status: 'succeeded', result: 'Unlocked' });
    const audit = await api('GET', `/v1/audit?resource_id=${control.id}&action=operator.session.released`);
    expect(audit.body.data[0]).toMatchObject({ actor: 'system', details: { why: 'hold_lapsed', resumed: true } });
    open.socket.close();
  });

  it('answers no_running_task on an idle device, and revoking a holding session resumes its task', async () => {
    const device = await newDevice();
    const control = await mint(device, { mode: 'control' });
    const idle = await api('POST', `/v1/sessions/${control.id}/takeover`, {});
    expect({ status: idle.status, code: idle.body.error.code }).toEqual({ status: 409, code: 'no_running_task' });
    const task = await taskAtTheWall(device);
    expect((await api('POST', `/v1/sessions/${control.id}/takeover`, {})).status).toBe(200);
    expect((await api('DELETE', `/v1/sessions/${control.id}`)).status).toBe(204);
    const resumed = await api('GET', `/v1/tasks/${task}`);
    expect(resumed.body.status).toBe('running');
    expect((await api('POST', `/v1/tasks/${task}/cancel`)).status).toBe(202);
    const expired = await api('POST', `/v1/sessions/${control.id}/takeover`, {});
    expect({ status: expired.status, code: expired.body.error.code }).toEqual({ status: 410, code: 'session_expired' });
  });

  it('drops the hold when the held task is canceled', async () => {
    const device = await newDevice();
    const control = await mint(device, { mode: 'control' });
    const task = await taskAtTheWall(device);
    expect((await api('POST', `/v1/sessions/${control.id}/takeover`, {})).status).toBe(200);
    expect((await api('POST', `/v1/tasks/${task}/cancel`)).status).toBe(202);
    const [row] = await test.service.services.db.select().from(sessions).where(eq(sessions.id, parsePublicId('session', control.id)!));
    expect(row).toMatchObject({ holdTaskId: null, holdExpiresAt: null });
    expect((await api('POST', `/v1/sessions/${control.id}/release`)).body.error.code).toBe('no_running_task');
  });
});

describe('metering', () => {
  it('reports session lifetime as session_duration seconds', async () => {
    const usage = await api('GET', '/v1/usage');
    const row = usage.body.data.find((entry: any) => entry.kind === 'session_duration');
    expect(row).toMatchObject({ resource: 'session', unit: 'second', window: 'rolling_24h' });
    expect(Number.isInteger(row.quantity)).toBe(true);
    expect(row.quantity).toBeGreaterThan(0);
  });
});
