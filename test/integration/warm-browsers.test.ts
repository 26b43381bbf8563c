import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isRunning } from '../../server/os/processes';
import { parsePublicId } from '../../server/domain/ids';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The warm pool with real Chromium and PostgreSQL, as root (each browser its own uid)
// and under the default egress policy (loopback refused). Three browsers at most, two of
// them kept warm.

const METRICS_TOKEN = 'warm-metrics-token-0123456789abcdef';
let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let privateServer: Server;
let privatePort: number;

beforeAll(async () => {
  test = await startTestService({ OPERATOR_WARM_BROWSERS: '2', OPERATOR_MAX_BROWSERS: '3', OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'false', OPERATOR_METRICS_TOKEN: METRICS_TOKEN });
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']));
  privateServer = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<title>Private</title>'));
  await new Promise<void>((resolve) => privateServer.listen(0, '127.0.0.1', () => resolve()));
  privatePort = (privateServer.address() as AddressInfo).port;
}, 120_000);

afterAll(async () => {
  await test?.stop();
  await new Promise((resolve) => privateServer?.close(resolve));
});

const profilesRoot = () => path.join(test.dataDir, 'profiles');

/** Profiles marked warm: the pool's warm browsers, launched or launching. */
async function warmIds(): Promise<string[]> {
  return existsSync(path.join(profilesRoot(), '.warm')) ? readdir(path.join(profilesRoot(), '.warm')) : [];
}

async function chromiumPid(profileId: string): Promise<number> {
  return Number((await readFile(path.join(profilesRoot(), profileId, 'chromium.pid'), 'utf8')).trim());
}

async function waitFor(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Both warm browsers launched; returns their profile ids. */
async function warmPoolFull(): Promise<string[]> {
  await waitFor('two warm browsers', async () => test.service.services.browserPool.warmReady === 2 && (await warmIds()).length === 2);
  return warmIds();
}

/** Devices the current test created, deleted after it (again) so a failed test does not fill the host for the next. */
const createdDevices: Array<{ client: ApiCall; id: string }> = [];

afterEach(async () => {
  for (const { client, id } of createdDevices.splice(0)) await client('DELETE', `/v1/devices/${id}`);
});

async function createDevice(client = api, spaceId = tenant.spaceId): Promise<{ id: string; uuid: string; ms: number }> {
  const started = performance.now();
  const created = await client('POST', '/v1/devices', { space_id: spaceId });
  const ms = performance.now() - started;
  expect(created.status).toBe(201);
  createdDevices.push({ client, id: created.body.id });
  return { id: created.body.id, uuid: parsePublicId('device', created.body.id)!, ms };
}

describe('a create takes a warm browser', () => {
  it('hands over a launched browser: the device gets its profile, owned by the device, under the egress policy; a refill follows', async () => {
    const warm = await warmPoolFull();
    const warmPids = await Promise.all(warm.map(chromiumPid));

    const device = await createDevice();
    expect(warm).toContain(device.uuid);
    // The browser was already running: the create did not start a Chromium.
    const pid = test.service.services.browserPool.get(device.uuid)?.pid;
    expect(pid).toBe(warmPids[warm.indexOf(device.uuid)]);
    expect(device.ms).toBeLessThan(2_000);
    // The device's profile: no longer marked warm, owned by the browser's own uid, closed to others.
    expect(await warmIds()).not.toContain(device.uuid);
    const profile = await stat(path.join(profilesRoot(), device.uuid));
    // As root each browser runs under a uid of its own; as an ordinary user, under the service's.
    if (process.getuid?.() === 0) expect(profile.uid).toBeGreaterThanOrEqual(60601);
    else expect(profile.uid).toBe(process.getuid?.());
    expect(profile.mode & 0o777).toBe(0o700);

    // Launched behind the egress proxy like any device's browser: loopback is refused.
    const submitted = await api('POST', `/v1/devices/${device.id}/tasks`, { prompt: `go to http://127.0.0.1:${privatePort}/ then return the title` });
    expect(submitted.status).toBe(202);
    const task = await waitForTaskEnd(api, submitted.body.id);
    expect(task.result).toMatchObject({ error: 'destination_blocked' });

    // Refilled in the background with a new profile.
    const refilled = await warmPoolFull();
    expect(refilled).not.toContain(device.uuid);

    // Persisted like any device's profile: sleep keeps it, wake starts on it.
    expect((await api('POST', `/v1/devices/${device.id}/sleep`)).status).toBe(202);
    expect(existsSync(path.join(profilesRoot(), device.uuid))).toBe(true);
    expect((await api('POST', `/v1/devices/${device.id}/wake`)).status).toBe(202);
    const cmdline = await readFile(`/proc/${test.service.services.browserPool.get(device.uuid)!.pid}/cmdline`, 'utf8');
    expect(cmdline.split('\0')).toContain(`--user-data-dir=${path.join(profilesRoot(), device.uuid)}`);
    expect((await api('DELETE', `/v1/devices/${device.id}`)).status).toBe(202);
  }, 120_000);

  it('never reuses a warm browser a device had, and hands each organization a browser nobody used', async () => {
    await warmPoolFull();
    const first = await createDevice();
    const firstPid = test.service.services.browserPool.get(first.uuid)!.pid!;
    expect((await api('DELETE', `/v1/devices/${first.id}`)).status).toBe(202);
    // Its browser is gone with its profile, and it never went back to the pool.
    await waitFor('the deleted device browser to exit', async () => !(await isRunning(firstPid)));
    await waitFor('the deleted device profile to go', () => !existsSync(path.join(profilesRoot(), first.uuid)));
    expect(await warmIds()).not.toContain(first.uuid);

    const other = await createTenant(test, { name: 'other org' });
    const otherApi = apiClient(test.url, await other.key(['operator:devices:read', 'operator:devices:write']));
    await warmPoolFull();
    const second = await createDevice(otherApi, other.spaceId);
    expect(second.uuid).not.toBe(first.uuid);
    const handle = test.service.services.browserPool.get(second.uuid)!;
    expect(handle.pid).not.toBe(firstPid);
    // A fresh browser: its one page has never been anywhere.
    expect((await (await handle.page()).observe()).url).toBe('about:blank');
    // The other organization's key cannot see the device, the first's cannot see the second's.
    expect((await api('GET', `/v1/devices/${second.id}`)).status).toBe(404);
    expect((await otherApi('DELETE', `/v1/devices/${second.id}`)).status).toBe(202);
  }, 120_000);
});

describe('capacity', () => {
  it('counts warm browsers, and closes one when a device needs its slot', async () => {
    await warmPoolFull();
    const asleep = await createDevice();
    expect((await api('POST', `/v1/devices/${asleep.id}/sleep`)).status).toBe(202);
    const beforeCreate = await warmPoolFull();
    const running = await createDevice();
    expect(beforeCreate).toContain(running.uuid);
    // One device and two warm browsers fill the host's three slots.
    const afterRefill = await warmPoolFull();
    expect(test.service.services.browserPool.size).toBe(3);

    // Waking the sleeping device needs a slot: the newest warm browser, the refill that
    // followed the last create, gives way. (Which one is newest is known from the
    // launches, not from the markers' listing: readdir lists them in hash order.)
    const newest = afterRefill.filter((id) => !beforeCreate.includes(id));
    expect(newest).toHaveLength(1);
    const older = afterRefill.filter((id) => id !== newest[0]);
    const woken = await api('POST', `/v1/devices/${asleep.id}/wake`);
    expect(woken.status).toBe(202);
    expect(woken.body.status).toBe('active');
    expect(test.service.services.browserPool.size).toBe(3);
    expect(await warmIds()).toEqual(older);
    expect(existsSync(path.join(profilesRoot(), newest[0]!))).toBe(false);
    expect(existsSync(path.join(profilesRoot(), older[0]!))).toBe(true);

    // The last warm browser serves the next create; then the host is full of devices.
    const third = await createDevice();
    expect((await api('POST', '/v1/devices', { space_id: tenant.spaceId })).status).toBe(503);
    for (const device of [asleep, running, third]) expect((await api('DELETE', `/v1/devices/${device.id}`)).status).toBe(202);
    await warmPoolFull();
  }, 120_000);
});

describe('a warm browser that dies', () => {
  it('is replaced, its profile removed, and creates still work', async () => {
    const warm = await warmPoolFull();
    const victim = warm[0]!;
    const pid = await chromiumPid(victim);
    process.kill(pid, 'SIGKILL');
    await waitFor('the crashed warm browser replaced', async () => {
      const now = await warmIds();
      return !now.includes(victim) && now.length === 2 && test.service.services.browserPool.warmReady === 2;
    });
    expect(existsSync(path.join(profilesRoot(), victim))).toBe(false);
    const device = await createDevice();
    expect(device.uuid).not.toBe(victim);
    expect((await api('DELETE', `/v1/devices/${device.id}`)).status).toBe(202);
  }, 120_000);
});

describe('restart', () => {
  it('leaves no warm browser or warm profile behind, and warms new ones', async () => {
    const warm = await warmPoolFull();
    const pids = await Promise.all(warm.map(chromiumPid));
    await test.restart();
    for (const pid of pids) expect(await isRunning(pid)).toBe(false);
    for (const id of warm) expect(existsSync(path.join(profilesRoot(), id))).toBe(false);
    const after = await warmPoolFull();
    expect(after.filter((id) => warm.includes(id))).toEqual([]);
  }, 120_000);
});

describe('/metrics', () => {
  it('shows the warm browsers ready for a create', async () => {
    await warmPoolFull();
    const scrape = await fetch(`${test.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    const text = await scrape.text();
    expect(text).toMatch(new RegExp(`^operator_warm_browsers\\{host="${test.service.services.hostId}"\\} 2$`, 'm'));
    // Capacity counts them.
    expect(text).toMatch(new RegExp(`^operator_browsers_in_use\\{host="${test.service.services.hostId}"\\} 2$`, 'm'));
  });
});
