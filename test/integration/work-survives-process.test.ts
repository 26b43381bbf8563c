import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { applyMigrations } from '../../db/migrate';
import { devices } from '../../db/schema';
import { parsePublicId } from '../../server/domain/ids';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { browsersOf, keepersOf } from '../support/keeper-processes';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// A deploy (SIGTERM, then a new service on the same data directory) and a crash of the
// service process (kill -9, then a restart) cost no task: a task running across it
// finishes with what its page held, and a task parked on a page holding typed state is
// answered afterwards and finishes with that state. Real service processes, real
// Chromium, real PostgreSQL.

let database: TestDatabase;
let db: Database;
let dataDir: string;
let pages: TaskPages;
let receiver: WebhookReceiver;
let port: number;
let host: HostProcess | null = null;
let api: ApiCall;
let spaceId: string;

const env = { OPERATOR_TASK_LEASE_SECS: '3', OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true' };

beforeAll(async () => {
  database = await createTestDatabase();
  db = connectDatabase(database.url, 2);
  await applyMigrations(db);
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-survives-'));
  pages = await startTaskPages();
  receiver = await startWebhookReceiver();
  port = await freePort();
  const { org_id: orgId } = await createOrganization(db.db, { name: 'Deploys', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: receiver.url });
  ({ space_id: spaceId } = await createSpace(db.db, orgId, 'default'));
  const scopes = ['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write'] as const;
  const { key } = await createApiKey(db.db, { orgId, scopes: [...scopes], spaceIds: [], env: 'test' });
  api = apiClient(`http://127.0.0.1:${port}`, key);
});

afterAll(async () => {
  // Ctrl-C: the browsers close with the service.
  await host?.stop('SIGINT');
  await receiver?.close();
  await pages?.close();
  await db?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The escalation URL's delivery for a parked task (its resolve bearer), once it arrived. */
async function escalationDelivery(taskId: string): Promise<{ token: string; escalation: { id: string } }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = receiver.received.map((request) => JSON.parse(request.rawBody.toString('utf8'))).find((body) => body.escalation.task_id === taskId);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no escalation delivery for task ${taskId}`);
    await receiver.waitFor(receiver.received.length + 1, Math.max(1, deadline - Date.now())).catch(() => undefined);
  }
}

/** Waits until the task recorded an action step starting with `action`. */
async function waitForStep(taskId: string, action: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await latestActions(taskId)).some((seen) => seen?.startsWith(action))) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`task ${taskId} never recorded ${action}`);
}

async function latestActions(taskId: string): Promise<string[]> {
  const [row] = await db.sql<Array<{ actions: string[] }>>`select coalesce(array_agg(action order by seq), '{}') as actions from task_steps where task_id = ${parsePublicId('task', taskId)!}`;
  return row?.actions ?? [];
}

async function browserIncarnation(deviceId: string): Promise<string | null> {
  const [row] = await db.db.select({ incarnation: devices.browserIncarnation }).from(devices).where(eq(devices.id, parsePublicId('device', deviceId)!));
  return row?.incarnation ?? null;
}

describe.each([
  { event: 'a deploy (SIGTERM, then a new service)', signal: 'SIGTERM' as const, step: 'handed_over' },
  { event: 'a crash of the service process (kill -9, then a restart)', signal: 'SIGKILL' as const, step: 'driver_lost' },
])('$event', ({ signal, step }) => {
  it('finishes a running task with its page state and answers a parked one on its page', async () => {
    host ??= await startHostProcess({ databaseUrl: database.url, dataDir, port, env });
    const gate = `gate-${signal}`;
    const runningDevice = (await api('POST', '/v1/devices', { space_id: spaceId })).body;
    const parkedDevice = (await api('POST', '/v1/devices', { space_id: spaceId })).body;
    const running = (
      await api('POST', `/v1/devices/${runningDevice.id}/tasks`, {
        prompt: `go to ${pages.url(`/gated?name=${gate}`)} then type "kept-state" into "#field" then wait for "Gate open" then return the text of "#echo"`,
      })
    ).body;
    const parked = (
      await api('POST', `/v1/devices/${parkedDevice.id}/tasks`, {
        prompt: `go to ${pages.url('/echo')} then type "parked-state" into "#field" then ask a human "Go on?" then return the text of "#echo"`,
      })
    ).body;
    await waitForTaskEnd(api, parked.id, 30_000, ['needs_human']);
    const delivered = await escalationDelivery(parked.id);
    // The running task is inside its wait: typed state on the page, nothing to return yet.
    await waitForStep(running.id, 'type');
    const before = { running: await browserIncarnation(runningDevice.id), parked: await browserIncarnation(parkedDevice.id) };
    expect(before.running).not.toBeNull();

    await host.stop(signal);
    host = await startHostProcess({ databaseUrl: database.url, dataDir, port, env });
    pages.openGate(gate);

    expect(await waitForTaskEnd(api, running.id, 60_000)).toMatchObject({ status: 'succeeded', result: 'kept-state' });
    expect(await latestActions(running.id)).toContain(step);
    const answered = await apiClient(`http://127.0.0.1:${port}`, delivered.token)('POST', `/v1/escalations/${delivered.escalation.id}/resolve`, { answer: 'yes' });
    expect(answered.body).toMatchObject({ applied: true });
    expect(await waitForTaskEnd(api, parked.id, 30_000)).toMatchObject({ status: 'succeeded', result: 'parked-state' });
    // The same browsers, re-attached: not relaunched.
    expect({ running: await browserIncarnation(runningDevice.id), parked: await browserIncarnation(parkedDevice.id) }).toEqual(before);
  }, 180_000);
});

describe('a host retired for good', () => {
  it('closes every browser and keeper of the host on SIGTERM with OPERATOR_RETIRE_ON_STOP', async () => {
    // The previous service hands over; the retiring one re-attaches, then closes everything.
    await host?.stop('SIGTERM');
    host = await startHostProcess({ databaseUrl: database.url, dataDir, port, env: { ...env, OPERATOR_RETIRE_ON_STOP: 'true' } });
    const device = (await api('POST', '/v1/devices', { space_id: spaceId })).body;
    expect(device.status).toBe('active');
    expect(await keepersOf(dataDir)).not.toEqual([]);
    expect(await browsersOf(dataDir)).not.toEqual([]);
    await host.stop('SIGTERM');
    host = null;
    expect(await keepersOf(dataDir)).toEqual([]);
    expect(await browsersOf(dataDir)).toEqual([]);
  }, 120_000);
});
