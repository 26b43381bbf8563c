import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { escalations, taskSteps } from '../../db/schema';
import { loadConfig } from '../../server/core/config';
import { createOperator } from '../../server/domain/console/operator-accounts';
import { mintEscalationToken } from '../../server/domain/escalations/escalation-token';
import { parsePublicId } from '../../server/domain/ids';
import { notifyTaskChange } from '../../server/domain/channels/task-channel';
import { TaskStepFeeds } from '../../server/domain/tasks/task-step-feeds';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The limits at every entrance (issue 10): failed authentication throttled per client
// address on every bearer entrance, bodies over 1 MiB refused before they are read whole,
// console batches, event streams per key and their shared reads, live-view sockets per
// session, the input queue of a socket, and one screencast per device. Real server,
// PostgreSQL and Chromium; every limit at its default, except the throttle's window,
// shortened so a test can see it pass.

const DEFAULTS = loadConfig({}).limits;
const FAILURES = DEFAULTS.authFailures.limit;
const WINDOW_SECS = 3;
const MIB = 1024 * 1024;

let test: TestService;
let tenant: TestTenant;
let key: string;
let api: ApiCall;
let consoleKey: string;
let device: string;

beforeAll(async () => {
  test = await startTestService({
    OPERATOR_AUTH_FAILURE_LIMIT: String(FAILURES),
    OPERATOR_AUTH_FAILURE_WINDOW_SECS: String(WINDOW_SECS),
    // The test plays several clients behind one trusted proxy: itself, on 127.0.0.1.
    OPERATOR_TRUSTED_PROXIES: '127.0.0.1',
  });
  tenant = await createTenant(test);
  key = await tenant.key(allScopes);
  api = apiClient(test.url, key);
  consoleKey = (await createOperator(test.service.services.db, 'Ada')).console_key;
  const created = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
  expect(created.status).toBe(201);
  device = created.body.id;
});
afterAll(async () => {
  if (device !== undefined) await api('DELETE', `/v1/devices/${device}`);
  await test?.stop();
});

/** Headers of a request from `address`, as the trusted proxy forwards it. */
const from = (address: string) => ({ 'X-Forwarded-For': address });

async function mint(body: Record<string, unknown> = {}): Promise<{ id: string; ws_url: string; session_token: string }> {
  const minted = await api('POST', `/v1/devices/${device}/sessions`, body);
  expect(minted.status).toBe(201);
  return minted.body;
}

interface OpenSocket {
  socket: WebSocket;
  messages: string[];
  closed: Promise<{ code: number; reason: string }>;
}

interface RefusedHandshake {
  status: number;
  retryAfter: string | undefined;
  body: any;
}

/** Opens a live-view socket; a refused handshake resolves with its HTTP answer instead. */
function connect(session: { ws_url: string; session_token: string }, headers: Record<string, string> = {}, token = session.session_token): Promise<OpenSocket | RefusedHandshake> {
  return new Promise((resolve, reject) => {
    const url = `${test.url.replace('http', 'ws')}${new URL(session.ws_url).pathname}`;
    const socket = new WebSocket(url, ['svc.operator.v1', `svc.token.${token}`], { headers });
    const messages: string[] = [];
    socket.on('message', (data) => messages.push(data.toString()));
    const closed = new Promise<{ code: number; reason: string }>((done) => socket.on('close', (code, reason) => done({ code, reason: reason.toString() })));
    socket.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'], body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    socket.on('error', reject);
    socket.on('open', () => resolve({ socket, messages, closed }));
  });
}

async function opened(attempt: Promise<OpenSocket | RefusedHandshake>): Promise<OpenSocket> {
  const result = await attempt;
  if (!('socket' in result)) throw new Error(`handshake refused with ${result.status} ${JSON.stringify(result.body)}`);
  return result;
}

async function refused(attempt: Promise<OpenSocket | RefusedHandshake>): Promise<RefusedHandshake> {
  const result = await attempt;
  if ('socket' in result) {
    result.socket.close();
    throw new Error('the handshake was accepted');
  }
  return result;
}

async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A request body that sends `bytes` and then never ends: only a server that stops reading at its limit can answer it. */
function endlessBody(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return new Promise<void>(() => undefined);
      const chunk = new Uint8Array(64 * 1024).fill(0x20);
      sent += chunk.length;
      controller.enqueue(chunk);
      return undefined;
    },
  });
}

/** POSTs a chunked body (no Content-Length) and returns the answer, then drops the request. */
async function postStreamed(path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const aborter = new AbortController();
  try {
    const response = await fetch(`${test.url}${path}`, { method: 'POST', body, duplex: 'half', headers: { 'Content-Type': 'application/json', ...headers }, signal: aborter.signal } as RequestInit);
    return { status: response.status, body: await response.json() };
  } finally {
    aborter.abort();
  }
}

/** A task parked at needs_human on the device, with a fresh escalation bearer for its resolve callback. */
async function parkedTask(): Promise<{ taskId: string; escalationId: string; bearer: string }> {
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: 'ask a human "May I go on?"' });
  expect(submitted.status).toBe(202);
  await waitForTaskEnd(api, submitted.body.id, 30_000, ['needs_human']);
  const listed = await api('GET', `/v1/escalations?task_id=${submitted.body.id}`);
  const escalationId: string = listed.body.data[0].id;
  // What a delivery to the organization's escalation URL would have minted and sent.
  const { token, hash } = mintEscalationToken();
  await test.service.services.db
    .update(escalations)
    .set({ tokenHashes: [hash] })
    .where(eq(escalations.id, parsePublicId('escalation', escalationId)!));
  return { taskId: submitted.body.id, escalationId, bearer: token };
}

function consoleSignIn(consoleKeyTried: string, headers: Record<string, string> = {}) {
  return fetch(`${test.url}/console/api/signIn`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'x-svc-console': '1', ...headers },
    body: JSON.stringify({ console_key: consoleKeyTried }),
  });
}

const badKey = `svc_operator_test_aaaaaaaaaaaa_${'A'.repeat(43)}`;
const withoutRequestId = (body: any) => ({ ...body, error: { ...body.error, request_id: undefined } });

describe('live view', () => {
  it('runs one screencast per device for all its sockets, every socket getting its frames', async () => {
    const handle = test.service.services.browserPool.get(parsePublicId('device', device)!)!;
    const liveView = vi.spyOn(handle, 'liveView');
    try {
      const [first, second] = [await mint(), await mint()];
      const sockets = await Promise.all([opened(connect(first)), opened(connect(first)), opened(connect(second))]);
      await eventually(() => sockets.every((open) => open.messages.some((message) => message.startsWith('{"type":"frame"'))));
      expect(liveView).toHaveBeenCalledTimes(1);
      for (const { socket } of sockets) socket.close();
    } finally {
      liveView.mockRestore();
    }
  });

  it(`refuses a session's socket past ${DEFAULTS.socketsPerSession} with 429 too_many_sockets, and takes one again when a socket closes`, async () => {
    const session = await mint();
    const sockets = [];
    for (let index = 0; index < DEFAULTS.socketsPerSession; index += 1) sockets.push(await opened(connect(session)));
    const over = await refused(connect(session));
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: 'too_many_sockets', message: expect.any(String), request_id: expect.stringMatching(/^req_/) });
    // Another session of the same device has its own sockets.
    const other = await opened(connect(await mint()));
    other.socket.close();

    sockets.pop()!.socket.close();
    let again: OpenSocket | null = null;
    await eventually(async () => {
      const attempt = await connect(session);
      if ('socket' in attempt) again = attempt;
      return again !== null;
    });
    for (const { socket } of [...sockets, again!]) socket.close();
  });

  it(`closes a socket that queues more than ${DEFAULTS.sessionInputQueue} inputs with 1008 input_queue_full; inputs within the bound are answered`, async () => {
    const session = await mint({ mode: 'control' });
    const input = JSON.stringify({ type: 'input', input: { kind: 'move', x: 10, y: 10 } });

    const calm = await opened(connect(session));
    for (let sent = 1; sent <= 5; sent += 1) {
      calm.socket.send(input);
      // No takeover is held: each input is answered input_not_allowed, and the socket stays.
      await eventually(() => calm.messages.filter((message) => message.includes('input_not_allowed')).length === sent);
    }

    const flood = await opened(connect(session));
    for (let sent = 0; sent < DEFAULTS.sessionInputQueue * 4; sent += 1) flood.socket.send(input);
    expect(await flood.closed).toEqual({ code: 1008, reason: 'input_queue_full' });
    expect(calm.socket.readyState).toBe(WebSocket.OPEN);
    calm.socket.close();
  });
});

describe('event streams', () => {
  let parked: { taskId: string; escalationId: string; bearer: string };
  beforeAll(async () => {
    parked = await parkedTask();
  });
  afterAll(async () => {
    if (parked !== undefined) await api('POST', `/v1/tasks/${parked.taskId}/cancel`);
  });

  async function openStream(streamKey: string): Promise<{ status: number; retryAfter: string | null; body: any; close: () => void }> {
    const aborter = new AbortController();
    const response = await fetch(`${test.url}/v1/tasks/${parked.taskId}/events`, { headers: { Authorization: `Bearer ${streamKey}` }, signal: aborter.signal });
    const body = response.status === 200 ? null : await response.json();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body, close: () => aborter.abort() };
  }

  it(`refuses a key's event stream past ${DEFAULTS.eventStreamsPerKey} with 429 too_many_streams and Retry-After, and frees the slot when a stream ends`, async () => {
    const streamKey = await tenant.key(['operator:tasks:read']);
    const streams = await Promise.all(Array.from({ length: DEFAULTS.eventStreamsPerKey }, () => openStream(streamKey)));
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));

    const over = await openStream(streamKey);
    expect(over.status).toBe(429);
    expect(over.retryAfter).toMatch(/^[1-9]\d*$/);
    expect(over.body.error).toMatchObject({ code: 'too_many_streams', request_id: expect.stringMatching(/^req_/) });

    // Another key is not affected.
    const otherKey = await openStream(await tenant.key(['operator:tasks:read']));
    expect(otherKey.status).toBe(200);
    otherKey.close();

    streams.pop()!.close();
    await eventually(async () => {
      const again = await openStream(streamKey);
      again.close();
      return again.status === 200;
    });
    for (const stream of streams) stream.close();
  });

  it('reads each new step once for all the streams of a task, not once per stream', async () => {
    const { db, taskChannel } = test.service.services;
    const taskId = parsePublicId('task', parked.taskId)!;
    let queries = 0;
    const countingDb = new Proxy(db, {
      get(target, property, receiver) {
        if (property === 'select') queries += 1;
        return Reflect.get(target, property, receiver);
      },
    });
    const feeds = new TaskStepFeeds(countingDb, taskChannel, 'http://localhost');
    const [row] = await db.execute<{ backlog: number }>(sql`select count(*)::int as backlog from task_steps where task_id = ${taskId}`);
    const backlog = row!.backlog;
    const readers = Array.from({ length: 50 }, () => ({ seqs: [] as number[] }));
    const unsubscribes = readers.map((reader) =>
      feeds.subscribe(taskId, 0, {
        steps: (steps) => reader.seqs.push(...steps.map((step) => step.seq)),
        done: () => undefined,
        failed: (error) => {
          throw error;
        },
      }),
    );
    await eventually(() => readers.every((reader) => reader.seqs.length === backlog));

    queries = 0;
    const added = 5;
    for (let seq = backlog + 1; seq <= backlog + added; seq += 1) {
      // As the worker records a step: one transaction, with its notification.
      await db.transaction(async (tx) => {
        await tx.insert(taskSteps).values({ taskId, seq, orgId: tenant.orgId, type: 'observation', action: 'limits_test' });
        await notifyTaskChange(tx, taskId, 'step');
      });
    }
    await eventually(() => readers.every((reader) => reader.seqs.length === backlog + added));
    const everySeq = Array.from({ length: backlog + added }, (_, index) => index + 1);
    expect(readers.every((reader) => JSON.stringify(reader.seqs) === JSON.stringify(everySeq))).toBe(true);
    // 50 streams, 5 steps: one read per step (fewer if notifications arrive together), where
    // a read per stream would have been 250.
    expect(queries).toBeGreaterThan(0);
    expect(queries).toBeLessThanOrEqual(added);
    for (const unsubscribe of unsubscribes) unsubscribe();
  });
});

describe('bodies over 1 MiB', () => {
  it('refuses a chunked /v1 body (no Content-Length) as soon as 1 MiB has arrived, with 413 payload_too_large', async () => {
    const response = await postStreamed('/v1/devices', endlessBody(2 * MIB), { Authorization: `Bearer ${key}` });
    expect(response.status).toBe(413);
    expect(response.body.error).toMatchObject({ code: 'payload_too_large', request_id: expect.stringMatching(/^req_/) });
  });

  it('refuses the escalation resolve callback a streamed body over 1 MiB, answers a wrong bearer without reading it whole, and takes a body just under', async () => {
    const { escalationId, taskId, bearer } = await parkedTask();
    const path = `/v1/escalations/${escalationId}/resolve`;
    const wrongBearer = await postStreamed(path, endlessBody(2 * MIB), { Authorization: `Bearer esctok_${'A'.repeat(43)}` });
    expect({ status: wrongBearer.status, code: wrongBearer.body.error.code }).toEqual({ status: 401, code: 'invalid_escalation_token' });
    const tooLarge = await postStreamed(path, endlessBody(2 * MIB), { Authorization: `Bearer ${bearer}` });
    expect({ status: tooLarge.status, code: tooLarge.body.error.code }).toEqual({ status: 413, code: 'payload_too_large' });

    const answer = JSON.stringify({ answer: 'yes' });
    const justUnder = answer + ' '.repeat(MIB - 1024 - answer.length);
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(justUnder));
        controller.close();
      },
    });
    const resolved = await postStreamed(path, chunked, { Authorization: `Bearer ${bearer}` });
    expect(resolved).toEqual({ status: 200, body: { applied: true, id: escalationId, object: 'escalation', status: 'resolved' } });
    await waitForTaskEnd(api, taskId);
  });

  it('refuses console API bodies over 1 MiB, declared or streamed, with 413 payload_too_large', async () => {
    const declared = await fetch(`${test.url}/console/api/signIn`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-svc-console': '1' },
      body: JSON.stringify({ console_key: 'x'.repeat(2 * MIB) }),
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as any).error).toMatchObject({ code: 'payload_too_large', request_id: expect.stringMatching(/^req_/) });
    const streamed = await postStreamed('/console/api/signIn', endlessBody(2 * MIB), { 'x-svc-console': '1' });
    expect({ status: streamed.status, code: streamed.body.error.code }).toEqual({ status: 413, code: 'payload_too_large' });
    // Under the limit the console's own checks answer (here: the key is over 200 characters).
    const underLimit = await fetch(`${test.url}/console/api/signIn`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-svc-console': '1' },
      body: JSON.stringify({ console_key: 'x'.repeat(MIB - 1024) }),
    });
    expect(underLimit.status).toBe(400);
  });
});

describe('console batches', () => {
  it('refuses a batch of more than 10 calls with 400 invalid_request, and serves one of 10', async () => {
    const batch = (calls: number) => fetch(`${test.url}/console/api/${Array(calls).fill('me').join(',')}?batch=1`, { headers: { 'x-svc-console': '1' } });
    const over = await batch(11);
    expect(over.status).toBe(400);
    expect(((await over.json()) as any).error).toMatchObject({ code: 'invalid_request', request_id: expect.stringMatching(/^req_/) });
    const encodedCommas = await fetch(`${test.url}/console/api/${Array(11).fill('me').join('%2C')}?batch=1`, { headers: { 'x-svc-console': '1' } });
    expect(encodedCommas.status).toBe(400);

    const atLimit = await batch(10);
    // Served by tRPC: ten answers, each "sign in first" (no cookie).
    const answers = (await atLimit.json()) as any[];
    expect(answers).toHaveLength(10);
    expect(answers.every((answer) => answer.error.data.code === 'console_sign_in_required')).toBe(true);
  });
});

describe('failed authentication, per client address', () => {
  async function whoami(address: string, bearer: string) {
    const response = await fetch(`${test.url}/v1/whoami`, { headers: { Authorization: `Bearer ${bearer}`, ...from(address) } });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as any };
  }

  it(`answers an address 429 rate_limited with Retry-After on every entrance after ${FAILURES} bad API keys, the same for a good key, until the window passes`, async () => {
    const guesser = '198.51.100.1';
    for (let failure = 1; failure <= FAILURES; failure += 1) {
      expect((await whoami(guesser, badKey)).body.error.code).toBe('invalid_api_key');
      // Successes from the address count for nothing.
      if (failure === 1) expect((await whoami(guesser, key)).status).toBe(200);
    }
    const wrong = await whoami(guesser, badKey);
    const right = await whoami(guesser, key);
    for (const blocked of [wrong, right]) {
      expect(blocked.status).toBe(429);
      expect(Number(blocked.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(blocked.retryAfter)).toBeLessThanOrEqual(WINDOW_SECS);
      expect(blocked.body.error).toMatchObject({ code: 'rate_limited', request_id: expect.stringMatching(/^req_/) });
    }
    // Nothing tells a right key from a wrong one.
    expect(withoutRequestId(right.body)).toEqual(withoutRequestId(wrong.body));

    // Every bearer entrance refuses the address.
    const session = await mint();
    expect((await refused(connect(session, from(guesser)))).status).toBe(429);
    const resolve = await fetch(`${test.url}/v1/escalations/esc_00000000-0000-4000-8000-000000000000/resolve`, { method: 'POST', headers: { Authorization: 'Bearer esctok_x', ...from(guesser) } });
    expect(resolve.status).toBe(429);
    const signIn = await consoleSignIn(consoleKey, from(guesser));
    expect(signIn.status).toBe(429);
    expect(((await signIn.json()) as any).error.code).toBe('rate_limited');

    // Other addresses are not refused for the guesser's failures.
    expect((await whoami('198.51.100.2', key)).status).toBe(200);
    const neighbour = await opened(connect(session, from('198.51.100.2')));
    neighbour.socket.close();

    await new Promise((resolve) => setTimeout(resolve, Number(right.retryAfter) * 1000));
    expect((await whoami(guesser, key)).status).toBe(200);
  });

  it('counts bad escalation bearers of the resolve callback', async () => {
    const guesser = '198.51.100.3';
    const call = () =>
      fetch(`${test.url}/v1/escalations/esc_00000000-0000-4000-8000-000000000000/resolve`, {
        method: 'POST',
        headers: { Authorization: `Bearer esctok_${'B'.repeat(43)}`, ...from(guesser) },
      });
    for (let failure = 1; failure <= FAILURES; failure += 1) expect((await call()).status).toBe(401);
    const blocked = await call();
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(((await blocked.json()) as any).error.code).toBe('rate_limited');
  });

  it('counts bad session tokens of WebSocket handshakes', async () => {
    const guesser = '198.51.100.4';
    const session = await mint();
    const wrongToken = `sestok_${'C'.repeat(43)}`;
    for (let failure = 1; failure <= FAILURES; failure += 1) {
      expect((await refused(connect(session, from(guesser), wrongToken))).body.error.code).toBe('invalid_session_token');
    }
    for (const token of [wrongToken, session.session_token]) {
      const blocked = await refused(connect(session, from(guesser), token));
      expect(blocked.status).toBe(429);
      expect(blocked.retryAfter).toMatch(/^[1-9]\d*$/);
      expect(blocked.body.error.code).toBe('rate_limited');
    }
  });

  it('counts bad console keys at sign-in, and signs in from other addresses', async () => {
    const guesser = '198.51.100.5';
    const wrongKey = `svc_console_aaaaaaaaaaaa_${'D'.repeat(43)}`;
    for (let failure = 1; failure <= FAILURES; failure += 1) expect((await consoleSignIn(wrongKey, from(guesser))).status).toBe(401);
    for (const tried of [wrongKey, consoleKey]) {
      const blocked = await consoleSignIn(tried, from(guesser));
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(((await blocked.json()) as any).error.code).toBe('rate_limited');
    }
    expect((await consoleSignIn(consoleKey, from('198.51.100.6'))).status).toBe(200);
  });
});

describe('failed authentication without a trusted proxy', () => {
  let plain: TestService;
  beforeAll(async () => {
    plain = await startTestService({ OPERATOR_AUTH_FAILURE_LIMIT: String(FAILURES), OPERATOR_AUTH_FAILURE_WINDOW_SECS: String(WINDOW_SECS) });
  });
  afterAll(async () => {
    await plain?.stop();
  });

  it('counts by the connection’s address, whatever X-Forwarded-For a client writes', async () => {
    const call = (forwarded: string) => fetch(`${plain.url}/v1/whoami`, { headers: { Authorization: `Bearer ${badKey}`, ...from(forwarded) } });
    for (let failure = 1; failure <= FAILURES; failure += 1) expect((await call(`203.0.113.${failure}`)).status).toBe(401);
    expect((await call('203.0.113.250')).status).toBe(429);
  });
});
