import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { tasks } from '../../db/schema';
import { killOrphans } from '../../server/browser';
import { parsePublicId } from '../../server/domain/ids';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { apiClient, type ApiCall } from '../support/http';
import { devicesHoldingFinishedTasks, readStream, textChunks, waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { keepersOf } from '../support/keeper-processes';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

// A real crash: the server runs as a child process (server/main.ts) and is killed
// with SIGKILL in the middle of a task, so no shutdown code runs: the lease stays in the
// database, the slot stays held, Chromium is orphaned. A new server on the same database
// and data directory must end a running task and free the slot, and keep a parked one
// parked, with its escalation delivered again and answerable.

const LEASE_SECS = 2;

let database: TestDatabase;
let db: Database;
let dataDir: string;
let pages: TaskPages;
let port: number;
let server: HostProcess | null = null;

function startServer(): Promise<HostProcess> {
  return startHostProcess({
    databaseUrl: database.url,
    dataDir,
    port,
    env: {
      // The final SIGTERM closes the browsers rather than handing them over to a next start.
      OPERATOR_RETIRE_ON_STOP: 'true',
      OPERATOR_TASK_LEASE_SECS: String(LEASE_SECS),
      // Escalation deliveries to the local receiver; a dead server's attempt is made again
      // once its lease (the timeout plus 5 s) runs out.
      OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
      OPERATOR_WEBHOOK_TIMEOUT_MS: '1500',
      OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '100',
    },
  });
}

async function stopServer(signal: NodeJS.Signals): Promise<void> {
  const stopping = server;
  server = null;
  await stopping?.stop(signal);
}

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-crash-'));
  pages = await startTaskPages();
  port = await freePort();
});
afterAll(async () => {
  await stopServer('SIGTERM');
  await killOrphans(dataDir);
  await db?.close();
  await pages?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a server killed with SIGKILL mid-task', () => {
  it('fails the task with device_lost when its browser died with the server, frees the slot and leaves the device usable', async () => {
    server = await startServer();
    db = connectDatabase(database.url, 2);
    const { org_id: orgId } = await createOrganization(db.db, { name: 'Crash org', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const { space_id: spaceId } = await createSpace(db.db, orgId, 'default');
    const scopes = ['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write'] as const;
    const { key } = await createApiKey(db.db, { orgId, scopes: [...scopes], spaceIds: [], env: 'test' });
    const api: ApiCall = apiClient(`http://127.0.0.1:${port}`, key);

    const device = await api('POST', '/v1/devices', { space_id: spaceId });
    expect(device.status).toBe(201);
    const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, {
      prompt: `go to ${pages.url('/plain')} then wait for "a text that never comes"`,
    });
    expect(submitted.status).toBe(202);
    const taskId: string = submitted.body.id;

    // Killed while the agent waits inside its second step, lease held.
    const stream = await fetch(`http://127.0.0.1:${port}/v1/tasks/${taskId}/events`, { headers: { Authorization: `Bearer ${key}` } });
    for await (const chunk of textChunks(stream)) if (chunk.includes('id: 1\n')) break;
    const [leased] = await db.db.select().from(tasks).where(eq(tasks.id, parsePublicId('task', taskId)!));
    expect(leased).toMatchObject({ status: 'running', leaseOwner: expect.any(String) });
    // The machine's browsers go with the server (a reboot): its keepers are killed too.
    // (A crash that spares them continues the task: work-survives-process.test.ts.)
    await stopServer('SIGKILL');
    for (const keeper of await keepersOf(dataDir)) process.kill(keeper, 'SIGKILL');
    const [afterCrash] = await db.db.select().from(tasks).where(eq(tasks.id, leased!.id));
    expect(afterCrash!.status).toBe('running');

    server = await startServer();
    const ended = await waitForTaskEnd(api, taskId, 20_000);
    expect(ended).toMatchObject({
      status: 'failed',
      result: { error: 'device_lost', detail: "The device's browser stopped while the task was running." },
    });
    const [row] = await db.db.select().from(tasks).where(eq(tasks.id, leased!.id));
    expect(row!.leaseOwner).toBeNull();
    const reconciled = await api('GET', `/v1/devices/${device.body.id}`);
    expect(reconciled.body).toMatchObject({ status: 'active', current_task_id: null });
    expect(await devicesHoldingFinishedTasks(db.db)).toEqual([]);

    // The stream of the ended task replays its steps and the done frame.
    const replay = await readStream(`http://127.0.0.1:${port}/v1/tasks/${taskId}/events`, key);
    expect(replay.frames.at(-1)?.event).toBe('done');

    const next = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${pages.url('/plain')} then return the title` });
    expect(next.status).toBe(202);
    expect(await waitForTaskEnd(api, next.body.id)).toMatchObject({ status: 'succeeded', result: 'Plain' });
  }, 120_000);

  it('keeps a parked task parked and delivers its escalation again when the attempt in flight died with the server', async () => {
    // The first delivery is never answered: it is in flight when the server dies.
    const receiver = await startWebhookReceiver((res, index) => {
      if (index > 0) res.writeHead(200).end();
    });
    try {
      server ??= await startServer();
      db ??= connectDatabase(database.url, 2);
      const { org_id: orgId } = await createOrganization(db.db, { name: 'Parked org', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: receiver.url });
      const { space_id: spaceId } = await createSpace(db.db, orgId, 'default');
      const scopes = ['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:escalations:read'] as const;
      const { key } = await createApiKey(db.db, { orgId, scopes: [...scopes], spaceIds: [], env: 'test' });
      const api: ApiCall = apiClient(`http://127.0.0.1:${port}`, key);
      const device = await api('POST', '/v1/devices', { space_id: spaceId });
      const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${pages.url('/plain')} then ask a human "Across a crash?" then return the title` });
      await waitForTaskEnd(api, submitted.body.id, 20_000, ['needs_human']);
      const [first] = await receiver.waitFor(1);

      await stopServer('SIGKILL');
      server = await startServer();
      const [, second] = await receiver.waitFor(2, 20_000);
      const delivered = [first!, second!].map((request) => JSON.parse(request.rawBody.toString('utf8')));
      expect(delivered[1].escalation.id).toBe(delivered[0].escalation.id);
      expect(delivered[1].token).not.toBe(delivered[0].token);
      expect((await api('GET', `/v1/tasks/${submitted.body.id}`)).body.status).toBe('needs_human');

      const resolved = await apiClient(`http://127.0.0.1:${port}`, delivered[1].token)('POST', `/v1/escalations/${delivered[1].escalation.id}/resolve`, { answer: 'yes' });
      expect(resolved.body).toMatchObject({ applied: true, status: 'resolved' });
      // The browser outlived the server: the task finishes on the page it parked on.
      expect(await waitForTaskEnd(api, submitted.body.id)).toMatchObject({ status: 'succeeded', result: 'Plain' });
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
