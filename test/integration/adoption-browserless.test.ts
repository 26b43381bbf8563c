import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { applyMigrations } from '../../db/migrate';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import { startBrowserlessServer, type BrowserlessServer } from '../support/browserless-server';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { apiClient, type ApiCall } from '../support/http';
import { deviceHostOf, stepActionsOf, waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// Two instances on one database, their devices' browsers on one browserless server. One
// instance is killed with SIGKILL: the other adopts its devices within 30 s, a task
// running there finishes with what its page held, and a task parked on a page holding
// typed state is answered afterwards and finishes with that state. The dead instance's
// lease refuses nothing the living one does, and what it wrote before it died stays.

let database: TestDatabase;
let db: Database;
let browserless: BrowserlessServer;
let pages: TaskPages;
let receiver: WebhookReceiver;
const dataDirs: string[] = [];
const hosts: HostProcess[] = [];
let spaceId: string;
let key: string;

beforeAll(async () => {
  database = await createTestDatabase();
  db = connectDatabase(database.url, 2);
  await applyMigrations(db);
  browserless = await startBrowserlessServer({ concurrent: 4, queued: 0 });
  pages = await startTaskPages();
  receiver = await startWebhookReceiver();
  const { org_id: orgId } = await createOrganization(db.db, { name: 'Adopted', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: receiver.url });
  ({ space_id: spaceId } = await createSpace(db.db, orgId, 'default'));
  const scopes = ['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write'] as const;
  ({ key } = await createApiKey(db.db, { orgId, scopes: [...scopes], spaceIds: [], env: 'test' }));
});

afterAll(async () => {
  for (const host of hosts) await host.stop('SIGINT');
  await browserless?.stop();
  await receiver?.close();
  await pages?.close();
  await db?.close();
  await database?.drop();
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
});

async function startInstance(): Promise<{ host: HostProcess; api: ApiCall }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'operator-adoption-'));
  dataDirs.push(dataDir);
  const host = await startHostProcess({
    databaseUrl: database.url,
    dataDir,
    port: await freePort(),
    env: {
      OPERATOR_BROWSER: 'browserless',
      BROWSERLESS_URL: browserless.url,
      OPERATOR_TASK_LEASE_SECS: '3',
      OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
      OPERATOR_RATE_LIMIT_STORE: 'postgres',
      // Long enough for the other instance to join a dead one's browsers, short enough that
      // nothing of the killed instance outlives the test.
      OPERATOR_BROWSER_KEEP_SECS: '40',
    },
  });
  hosts.push(host);
  return { host, api: apiClient(host.url, key) };
}



describe('two instances with browserless, one killed', () => {
  it('has the other adopt its devices within 30 s and finish their tasks on the same pages', async () => {
    const a = await startInstance();
    const b = await startInstance();
    const runningDevice = (await a.api('POST', '/v1/devices', { space_id: spaceId })).body;
    const parkedDevice = (await a.api('POST', '/v1/devices', { space_id: spaceId })).body;
    const hostA = await deviceHostOf(db.db, runningDevice.id);
    const running = (
      await a.api('POST', `/v1/devices/${runningDevice.id}/tasks`, {
        // The gate opens by itself 25 s after the page loaded, after the adoption: the page
        // needs no network once loaded, since its egress proxy was the killed instance's
        // (docs/architecture.md, "Tasks across a restart").
        prompt: `go to ${pages.url('/timed?after_ms=25000')} then type "kept-state" into "#field" then wait for "Gate open" then return the text of "#echo"`,
      })
    ).body;
    const parked = (
      await a.api('POST', `/v1/devices/${parkedDevice.id}/tasks`, {
        prompt: `go to ${pages.url('/echo')} then type "parked-state" into "#field" then ask a human "Go on?" then return the text of "#echo"`,
      })
    ).body;
    await waitForTaskEnd(a.api, parked.id, 30_000, ['needs_human']);
    const deadline = Date.now() + 30_000;
    while (!(await stepActionsOf(db.db, running.id)).some((action) => action.startsWith('type'))) {
      if (Date.now() > deadline) throw new Error('the running task never typed');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const [delivery] = await receiver.waitFor(1, 20_000);
    const escalation = JSON.parse(delivery!.rawBody.toString('utf8'));

    await a.host.stop('SIGKILL');
    const killedAt = Date.now();
    // B adopts both devices.
    for (;;) {
      const [runningHost, parkedHost] = [await deviceHostOf(db.db, runningDevice.id), await deviceHostOf(db.db, parkedDevice.id)];
      if (runningHost !== hostA && parkedHost !== hostA) break;
      if (Date.now() - killedAt > 30_000) throw new Error('the devices were not adopted within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(Date.now() - killedAt).toBeLessThan(30_000);

    expect(await waitForTaskEnd(b.api, running.id, 60_000)).toMatchObject({ status: 'succeeded', result: 'kept-state' });
    expect(await stepActionsOf(db.db, running.id)).toContain('driver_lost');
    const answered = await apiClient(b.host.url, escalation.token)('POST', `/v1/escalations/${escalation.escalation.id}/resolve`, { answer: 'yes' });
    expect(answered.body).toMatchObject({ applied: true });
    expect(await waitForTaskEnd(b.api, parked.id, 30_000)).toMatchObject({ status: 'succeeded', result: 'parked-state' });
    expect((await b.api('GET', `/v1/devices/${runningDevice.id}`)).body).toMatchObject({ status: 'active', current_task_id: null });
  }, 240_000);
});
