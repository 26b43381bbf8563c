import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { keepersOf } from '../support/keeper-processes';
import { afterAll, expect, it } from 'vitest';
import { connectDatabase } from '../../db/client';
import { parsePublicId } from '../../server/domain/ids';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import type { RunningService } from '../../server/assembly/start-service';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { apiClient } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startServiceOn } from '../support/test-service';
import { isRunning } from '../../server/os/processes';

// A server killed with SIGKILL cannot close anything: its device's Chromium lives on
// under its keeper, and its metering period stays open. The next start on the same data
// directory must re-attach to the kept browser, close the period at its last heartbeat
// and open a new one. A Chromium whose keeper is gone too is an orphan: killed, and the
// device relaunched.
const SWEEP_MS = 200;
let database: TestDatabase | undefined;
let dataDir: string | undefined;
let child: HostProcess | undefined;
let restarted: RunningService | undefined;

afterAll(async () => {
  await child?.stop('SIGKILL');
  await restarted?.close();
  await database?.drop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

/** The server as its own process, so it can be killed outright. */
async function startChildServer(): Promise<HostProcess> {
  return startHostProcess({ databaseUrl: database!.url, dataDir: dataDir!, port: await freePort(), env: { OPERATOR_SWEEP_INTERVAL_MS: String(SWEEP_MS) } });
}

/** The next start on the same database and data directory, in this process. */
function startInProcess(): Promise<RunningService> {
  return startServiceOn(database!.url, dataDir!, { OPERATOR_SWEEP_INTERVAL_MS: String(SWEEP_MS) });
}

it('recovers from a SIGKILLed server: kept Chromium re-attached, metering closed at the last heartbeat, device active again; an orphan without keeper killed', { timeout: 150_000 }, async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-crash-'));
  const server = await startChildServer();
  child = server;

  const admin = connectDatabase(database.url, 2);
  const { org_id: orgId } = await createOrganization(admin.db, { name: 'crash', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { space_id: spaceId } = await createSpace(admin.db, orgId, 'default');
  const { key } = await createApiKey(admin.db, { orgId, scopes: ['operator:devices:read', 'operator:devices:write', 'operator:usage:read'], spaceIds: [], env: 'test' });
  await admin.close();

  const created = await apiClient(server.url, key)('POST', '/v1/devices', { space_id: spaceId });
  expect(created.status).toBe(201);
  const deviceId = parsePublicId('device', created.body.id)!;
  const oldPid = Number((await readFile(path.join(dataDir, 'profiles', deviceId, 'chromium.pid'), 'utf8')).trim());
  await sleep(SWEEP_MS * 5);

  await child.stop('SIGKILL');
  const killedAt = Date.now();

  // Its keeper holds it: the browser outlived the service.
  expect(await isRunning(oldPid)).toBe(true);
  restarted = await startInProcess();
  const api = apiClient(restarted.url, key);
  expect((await api('GET', `/v1/devices/${created.body.id}`)).body.status).toBe('active');
  const handle = restarted.services.browserPool.get(deviceId);
  expect(handle).toMatchObject({ pid: oldPid, reattached: true });
  expect(await isRunning(oldPid)).toBe(true);

  const periods = await restarted.services.sql<{ ended: number | null; heartbeat: number; started: number }[]>`
    select extract(epoch from started_at)::float8 * 1000 as started, extract(epoch from ended_at)::float8 * 1000 as ended,
           extract(epoch from heartbeat_at)::float8 * 1000 as heartbeat
    from device_active_periods where device_id = ${deviceId} order by started_at`;
  expect(periods).toHaveLength(2);
  const crashed = periods[0]!;
  const current = periods[1]!;
  // Closed at the last heartbeat: no time invented past the crash, at most one sweep lost.
  expect(crashed.ended).toBe(crashed.heartbeat);
  expect(crashed.ended!).toBeLessThanOrEqual(killedAt);
  expect(killedAt - crashed.ended!).toBeLessThan(SWEEP_MS * 10);
  expect(current.ended).toBeNull();
  expect(current.started).toBeGreaterThanOrEqual(crashed.ended!);

  // Handed over, then its keeper killed too: the next start finds a Chromium with no
  // keeper (or none at all, if it quit with its pipe), kills it and relaunches the device.
  await restarted.close('handover');
  restarted = undefined;
  expect(await isRunning(oldPid)).toBe(true);
  for (const keeper of await keepersOf(dataDir!)) process.kill(keeper, 'SIGKILL');
  restarted = await startInProcess();
  // A killed process may linger as a zombie when nothing reaps it; isRunning reads its state.
  expect(await isRunning(oldPid)).toBe(false);
  const relaunched = restarted.services.browserPool.get(deviceId);
  expect(relaunched).toMatchObject({ reattached: false });
  expect(relaunched!.pid).not.toBe(oldPid);
  expect(await isRunning(relaunched!.pid!)).toBe(true);
  const again = apiClient(restarted.url, key);
  expect((await again('GET', `/v1/devices/${created.body.id}`)).body.status).toBe('active');

  // A kept browser whose device is no longer this host's running one (here: slept while
  // no service ran) is closed by the next start, not re-attached.
  const keptPid = relaunched!.pid!;
  await restarted.close('handover');
  restarted = undefined;
  expect(await isRunning(keptPid)).toBe(true);
  const direct = connectDatabase(database!.url, 1);
  await direct.sql`update devices set status = 'sleeping' where id = ${deviceId}`;
  await direct.close();
  restarted = await startInProcess();
  expect(await isRunning(keptPid)).toBe(false);
  expect(await keepersOf(dataDir!)).toEqual([]);
  expect(restarted.services.browserPool.get(deviceId)).toBeUndefined();
});

it('hands its browsers over on SIGTERM and closes them on SIGINT', async () => {
  await restarted?.close();
  restarted = undefined;
  const server = await startChildServer();
  child = server;
  const admin = connectDatabase(database!.url, 2);
  const { org_id: orgId } = await createOrganization(admin.db, { name: 'signals', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { space_id: spaceId } = await createSpace(admin.db, orgId, 'default');
  const { key } = await createApiKey(admin.db, { orgId, scopes: ['operator:devices:read', 'operator:devices:write'], spaceIds: [], env: 'test' });
  await admin.close();
  const created = await apiClient(server.url, key)('POST', '/v1/devices', { space_id: spaceId });
  const deviceId = parsePublicId('device', created.body.id)!;
  const pid = Number((await readFile(path.join(dataDir!, 'profiles', deviceId, 'chromium.pid'), 'utf8')).trim());

  expect(await child.stop('SIGTERM')).toBe(0);
  expect(await isRunning(pid)).toBe(true);

  const next = await startChildServer();
  child = next;
  expect((await apiClient(next.url, key)('GET', `/v1/devices/${created.body.id}`)).body.status).toBe('active');
  expect(Number((await readFile(path.join(dataDir!, 'profiles', deviceId, 'chromium.pid'), 'utf8')).trim())).toBe(pid);
  expect(await child.stop('SIGINT')).toBe(0);
  expect(await isRunning(pid)).toBe(false);
  expect(await keepersOf(dataDir!)).toEqual([]);
}, 120_000);

it('answers a delete before the browser closes; a server SIGKILLed before the close ended leaves nothing the next start does not remove', async () => {
  await restarted?.close();
  restarted = undefined;
  // A database and data directory of its own: no device of the tests above comes back here.
  await database?.drop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-crash-'));
  const server = await startChildServer();
  child = server;
  const admin = connectDatabase(database.url, 2);
  const { org_id: orgId } = await createOrganization(admin.db, { name: 'release', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { space_id: spaceId } = await createSpace(admin.db, orgId, 'default');
  const { key } = await createApiKey(admin.db, { orgId, scopes: ['operator:devices:read', 'operator:devices:write'], spaceIds: [], env: 'test' });
  await admin.close();
  const api = apiClient(server.url, key);
  const created = await api('POST', '/v1/devices', { space_id: spaceId });
  const deviceId = parsePublicId('device', created.body.id)!;
  const profile = path.join(dataDir!, 'profiles', deviceId);
  const pid = Number((await readFile(path.join(profile, 'chromium.pid'), 'utf8')).trim());

  // A stopped keeper cannot close its browser: a delete that waited for the close would
  // wait out the keeper's timeout and answer with the browser gone.
  const keepers = await keepersOf(dataDir);
  expect(keepers).toHaveLength(1);
  for (const keeper of keepers) process.kill(keeper, 'SIGSTOP');
  try {
    const deleted = await api('DELETE', `/v1/devices/${created.body.id}`);
    expect(deleted.status).toBe(202);
    expect(deleted.body.status).toBe('terminated');
    expect(await isRunning(pid)).toBe(true);
    expect(existsSync(profile)).toBe(true);
    await child.stop('SIGKILL');
  } finally {
    for (const keeper of keepers) process.kill(keeper, 'SIGCONT');
  }

  // The keeper outlived the killed server. Whether it still holds the terminated device's
  // browser depends on whether the server's discard request reached its socket before the
  // SIGKILL (a discard ends the browser at once, with no graceful close to outlast); either
  // way the profile is left, and the next start must leave nothing.
  restarted = await startInProcess();
  expect(await isRunning(pid)).toBe(false);
  expect(existsSync(profile)).toBe(false);
  // The keeper exits once its browser is closed.
  await expect.poll(() => keepersOf(dataDir!), { timeout: 10_000 }).toEqual([]);
  expect((await apiClient(restarted.url, key)('GET', `/v1/devices/${created.body.id}`)).body.status).toBe('terminated');

  // The case the race above may skip, made certain: a device terminated while no service
  // ran here (as another host serving its delete would) still has its browser under a
  // keeper when this host starts again; that start ends the browser and removes the profile.
  const second = await apiClient(restarted.url, key)('POST', '/v1/devices', { space_id: spaceId });
  expect(second.status).toBe(201);
  const secondId = parsePublicId('device', second.body.id)!;
  const secondProfile = path.join(dataDir!, 'profiles', secondId);
  const secondPid = restarted.services.browserPool.get(secondId)!.pid!;
  await restarted.close('handover');
  restarted = undefined;
  expect(await isRunning(secondPid)).toBe(true);
  expect(await keepersOf(dataDir!)).toHaveLength(1);
  const direct = connectDatabase(database!.url, 1);
  await direct.sql`update devices set status = 'terminated' where id = ${secondId}`;
  await direct.close();
  restarted = await startInProcess();
  expect(await isRunning(secondPid)).toBe(false);
  expect(existsSync(secondProfile)).toBe(false);
  await expect.poll(() => keepersOf(dataDir!), { timeout: 10_000 }).toEqual([]);
  expect(restarted.services.browserPool.get(secondId)).toBeUndefined();
}, 120_000);
