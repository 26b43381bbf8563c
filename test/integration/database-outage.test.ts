import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { killOrphans } from '../../server/browser';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { apiClient, type ApiCall, type ApiResponse } from '../support/http';
import { startOwnedPostgres, type OwnedPostgres } from '../support/owned-postgres';
import { textChunks, waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// PostgreSQL, owned by this test, stops for 10 s under two real service processes that
// share it. Meanwhile every entrance answers 503 service_unavailable with Retry-After; a
// task mid-run and a task parked with typed state on its page both carry on once it is
// back, though their leases ran out meanwhile and the other instance sweeps; and on the
// instance whose OPERATOR_DATABASE_GRACE_SECS (3) the outage outlasts, a running task
// fails with service_unavailable, not device_lost.

const LEASE_SECS = 4;
const OUTAGE_MS = 10_000;

let postgresServer: OwnedPostgres;
let db: Database;
let pages: TaskPages;
let receiver: WebhookReceiver;
const services: HostProcess[] = [];
const dataDirs: string[] = [];

/** A service process on PostgreSQL here, with a data directory of its own; its log is kept. */
async function startService(env: Record<string, string>): Promise<HostProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'operator-outage-'));
  dataDirs.push(dataDir);
  const service = await startHostProcess({
    databaseUrl: postgresServer.url,
    dataDir,
    port: await freePort(),
    keepLog: true,
    env: { OPERATOR_TASK_LEASE_SECS: String(LEASE_SECS), OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true', OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '100', ...env },
  });
  services.push(service);
  return service;
}

/** The messages of the lines a service logged. */
const messages = (service: HostProcess) => service.lines.flatMap((line) => (line.startsWith('{') ? [(JSON.parse(line) as { msg?: string }).msg ?? ''] : []));

beforeAll(async () => {
  postgresServer = await startOwnedPostgres();
  pages = await startTaskPages();
  receiver = await startWebhookReceiver();
  // The instance the outage outlasts its grace on, started first: it applies the migrations.
  await startService({ OPERATOR_DATABASE_GRACE_SECS: '3' });
  await startService({});
  db = connectDatabase(postgresServer.url, 2);
});

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGTERM')));
  for (const dataDir of dataDirs) {
    await killOrphans(dataDir);
    await rm(dataDir, { recursive: true, force: true });
  }
  await db?.close();
  await receiver?.close();
  await pages?.close();
  await postgresServer?.remove();
});

/** Waits until the task's event stream, opened now, sends step `seq`. */
async function stepRecorded(url: string, key: string, taskId: string, seq: number, timeoutMs = 30_000): Promise<void> {
  const stream = await fetch(`${url}/v1/tasks/${taskId}/events`, { headers: { Authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(timeoutMs) });
  for await (const chunk of textChunks(stream)) if (chunk.includes(`id: ${seq}\n`)) return;
  throw new Error(`the event stream of ${taskId} ended before step ${seq}`);
}

/** A WebSocket handshake made by hand: the status line and headers of the answer. */
function handshake(url: string, sessionId: string, token: string): Promise<{ status: number; head: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `GET /v1/sessions/${sessionId}/ws HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: svc.operator.v1, svc.token.${token}\r\n\r\n`,
      );
    });
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body });
    });
  });
}

function expectServiceUnavailable(response: ApiResponse, elapsedMs: number): void {
  expect(response.status).toBe(503);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(response.body.error).toMatchObject({ code: 'service_unavailable', request_id: expect.stringMatching(/^req_/) });
  expect(elapsedMs).toBeLessThan(5_000);
}

describe('a 10-second PostgreSQL outage', () => {
  it('answers 503 meanwhile, keeps running and parked tasks with their pages, and fails a task past its grace with service_unavailable', async () => {
    const [graceShort, main] = services as [HostProcess, HostProcess];
    // Whatever failed, what each service said (and whether it still runs) is the evidence.
    onTestFailed(() => {
      for (const [name, service] of [['grace 3 s', graceShort], ['main', main]] as const) {
        console.error(`--- the ${name} service (exit code ${service.exitCode ?? 'none: running'}) logged:\n${service.lines.join('\n')}`);
      }
    });
    const { org_id: orgId } = await createOrganization(db.db, { name: 'Outage org', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: receiver.url });
    const { space_id: spaceId } = await createSpace(db.db, orgId, 'default');
    const scopes = ['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:sessions:write', 'operator:escalations:read'] as const;
    const { key } = await createApiKey(db.db, { orgId, scopes: [...scopes], spaceIds: [], env: 'test' });
    const api: ApiCall = apiClient(main.url, key);
    const graceApi: ApiCall = apiClient(graceShort.url, key);

    const [running, parked, doomed] = await Promise.all([api('POST', '/v1/devices', { space_id: spaceId }), api('POST', '/v1/devices', { space_id: spaceId }), graceApi('POST', '/v1/devices', { space_id: spaceId })]);
    for (const device of [running, parked, doomed]) expect(device.status).toBe(201);
    const session = await api('POST', `/v1/devices/${running.body.id}/sessions`, {});
    expect(session.status).toBe(201);

    // Parked with typed state on its page, and its escalation delivered.
    const parkedTask = await api('POST', `/v1/devices/${parked.body.id}/tasks`, {
      prompt: `go to ${pages.url('/echo')} then type "kept-state" into "#field" then ask a human "ok?" then return the text of "#echo"`,
    });
    expect(parkedTask.status).toBe(202);
    await waitForTaskEnd(api, parkedTask.body.id, 30_000, ['needs_human']);
    const [delivery] = await receiver.waitFor(1, 20_000);
    const escalation = JSON.parse(delivery!.rawBody.toString('utf8'));

    // Running: its `wait for` sees the text 6 s after the page loaded, inside the outage,
    // so the step is recorded only once the database is back.
    const runningTask = await api('POST', `/v1/devices/${running.body.id}/tasks`, {
      prompt: `go to ${pages.url('/late?ms=6000')} then wait for "Arrived at last" then return the text of "#status"`,
    });
    const doomedTask = await graceApi('POST', `/v1/devices/${doomed.body.id}/tasks`, { prompt: `go to ${pages.url('/plain')} then wait for "a text that never comes"` });
    await Promise.all([stepRecorded(main.url, key, runningTask.body.id, 1), stepRecorded(graceShort.url, key, doomedTask.body.id, 1)]);

    await postgresServer.stop();
    const stoppedAt = Date.now();
    // Past the authenticator's 500 ms cache: the key itself must be read.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const [method, route, body] of [
      ['GET', '/v1/whoami'],
      ['GET', `/v1/tasks/${runningTask.body.id}`],
      ['POST', '/v1/devices', { space_id: spaceId }],
    ] as const) {
      const started = Date.now();
      const response = await api(method, route, body);
      expectServiceUnavailable(response, Date.now() - started);
    }
    const readyStarted = Date.now();
    const ready = await api('GET', '/readyz');
    expectServiceUnavailable(ready, Date.now() - readyStarted);
    expect(ready.body).toMatchObject({ ok: false, reason: 'database_unreachable' });
    expect((await api('GET', '/healthz')).status).toBe(200);
    const socketStarted = Date.now();
    const refused = await handshake(main.url, session.body.id, session.body.session_token);
    expect(refused.status).toBe(503);
    expect(refused.head).toMatch(/\r\nRetry-After: \d+\r\n/i);
    expect(JSON.parse(refused.body).error.code).toBe('service_unavailable');
    expect(Date.now() - socketStarted).toBeLessThan(5_000);

    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS - (Date.now() - stoppedAt)));
    await postgresServer.start();
    // A client told 503 with Retry-After comes back when the service is ready again: each
    // notices the database is back within its probe's second.
    await Promise.all(services.map((service) => service.untilReady(20_000)));

    // Carried on: the lease of each ran out during the outage, and neither instance's sweep failed it.
    expect(await waitForTaskEnd(api, runningTask.body.id, 30_000), main.lines.join('\n')).toMatchObject({ status: 'succeeded', result: 'Arrived at last' });
    const resolved = await apiClient(main.url, escalation.token)('POST', `/v1/escalations/${escalation.escalation.id}/resolve`, { answer: 'yes' });
    expect(resolved.body).toMatchObject({ applied: true });
    expect(await waitForTaskEnd(api, parkedTask.body.id, 30_000)).toMatchObject({ status: 'succeeded', result: 'kept-state' });
    expect(await waitForTaskEnd(graceApi, doomedTask.body.id, 30_000)).toMatchObject({
      status: 'failed',
      result: { error: 'service_unavailable', detail: "The service's database was unreachable for longer than the task could wait." },
    });

    // The LISTEN connections came back: an event stream hears of new steps only by NOTIFY
    // (it reads once when it opens), so a step recorded after it opened arrives only if the
    // task channel listens again.
    const next = await api('POST', `/v1/devices/${running.body.id}/tasks`, {
      prompt: `go to ${pages.url('/late?ms=2000')} then wait for "Arrived at last" then return the text of "#status"`,
    });
    await stepRecorded(main.url, key, next.body.id, 1);
    await stepRecorded(main.url, key, next.body.id, 2, 10_000);
    expect(await waitForTaskEnd(api, next.body.id)).toMatchObject({ status: 'succeeded', result: 'Arrived at last' });

    // Said once each, however many ticks, runs and requests met the outage.
    for (const service of services) {
      const said = messages(service);
      expect(said.filter((msg) => msg.startsWith('database unreachable')), service.lines.join('\n')).toHaveLength(1);
      expect(said.filter((msg) => msg === 'database reachable again'), service.lines.join('\n')).toHaveLength(1);
      expect(said.filter((msg) => /failed$|threw/.test(msg)), service.lines.filter((line) => /failed"|threw/.test(line)).join('\n')).toEqual([]);
    }
  }, 120_000);
});
