import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../server/browser/pool';
import { BrowserlessProvider } from '../../server/browser/browserless-provider';
import { isRunning, processesOfUser, processGroupMembers } from '../../server/os/processes';
import { keepersOf } from '../support/keeper-processes';
import { MemoryStateStore } from '../support/memory-state-store';
import type { DeviceStateStore } from '../../server/browser/device-state';
import { KeeperBusyError, KeeperConnection } from '../../server/browser/keeper-connection';
import { keepersDirectory, keeperSocket } from '../../server/browser/keeper-directory';
import { LocalBrowserProvider } from '../../server/browser/local-provider';
import { localProfilesRoot } from '../../server/browser/profile-directory';
import type { BrowserHandle, PageDriver } from '../../server/browser/types';
import { BROWSER_ISOLATION, CHROMIUM_PATH, makeTempDir, startPageServer, type PageServer } from '../support/browser-fixtures';
import { startBrowserlessServer, type BrowserlessServer } from '../support/browserless-server';
import { PROJECT_ROOT } from '../support/service-process';

// Browsers outlive the service that started them (docs/architecture.md, "Process
// model"): each is held by a keeper process, and a new provider on the same data
// directory re-attaches to it, finding the same page with what was typed into it.

let server: PageServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
const asRoot = process.getuid?.() === 0;

beforeAll(async () => {
  server = await startPageServer();
  temp = await makeTempDir('browser-keeper-');
});
afterAll(async () => {
  await server?.close();
  await temp?.remove();
});

function localProvider(dataDir: string, keepSecs = 30): LocalBrowserProvider {
  return new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir, ...BROWSER_ISOLATION, keepSecs, egress: null });
}

/** The value of the /form page's city field, as the agent sees it. */
async function cityField(driver: PageDriver): Promise<string | undefined> {
  const observation = await driver.observe();
  return observation.elements.find((element) => element.name === 'Your city')?.value;
}

/** The uid a local browser runs as (its keeper's claim). */
async function uidOf(pid: number): Promise<number> {
  return (await stat(`/proc/${pid}`)).uid;
}

/** One CDP command on a raw keeper connection; resolves with its result. */
function command(connection: KeeperConnection, id: number, method: string, params: Record<string, unknown>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    connection.onmessage = (message) => {
      const parsed = JSON.parse(message) as { id?: number; result?: unknown; error?: unknown };
      if (parsed.id !== id) return;
      if (parsed.error !== undefined) reject(new Error(JSON.stringify(parsed.error)));
      else resolve(parsed.result);
    };
    connection.send(JSON.stringify({ id, method, params }));
  });
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await sleep(100);
  }
  return condition();
}

describe('local browsers under keepers', () => {
  it('re-attach after a provider lets go: same incarnation, pid and page, typed text intact; the socket is the service user’s alone', async () => {
    const dataDir = path.join(temp.dir, 'detached');
    const first = localProvider(dataDir);
    const handle = await first.launch({ deviceId: 'kept-device', orgId: 'org-1' });
    expect(handle.reattached).toBe(false);
    const driver = await handle.page();
    await driver.navigate(server.url('/form'));
    await driver.type('Lisbon', 'Your city');

    const keepers = keepersDirectory(dataDir);
    const socketPath = keeperSocket(keepers, 'kept-device');
    expect((await stat(keepers)).mode & 0o777).toBe(0o700);
    expect((await stat(keepers)).uid).toBe(process.getuid!());
    expect((await stat(socketPath)).mode & 0o777).toBe(0o600);
    if (asRoot) {
      // The browser's own uid (what a compromised renderer would run as) cannot reach the socket.
      const uid = await uidOf(handle.pid!);
      expect(uid).not.toBe(0);
      const attempt = spawn('/usr/bin/setpriv', [`--reuid=${uid}`, `--regid=${BROWSER_ISOLATION.users.gid}`, '--clear-groups', '--', '/usr/bin/node', '-e',
        `require('net').connect(${JSON.stringify(socketPath)}).on('connect', () => process.exit(0)).on('error', (e) => { console.log(e.code); process.exit(3); })`], { stdio: ['ignore', 'pipe', 'ignore'] });
      let output = '';
      attempt.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise((resolve) => attempt.once('exit', resolve));
      expect(code).toBe(3);
      expect(output.trim()).toBe('EACCES');
    }

    await first.detach();
    expect(await isRunning(handle.pid!)).toBe(true);

    const second = localProvider(dataDir);
    await second.start(); // the start-up sweeps spare a kept browser
    expect(await isRunning(handle.pid!)).toBe(true);
    expect(await second.keptDeviceIds()).toEqual(['kept-device']);
    const again = await second.launch({ deviceId: 'kept-device', orgId: 'org-1' });
    expect(again).toMatchObject({ reattached: true, incarnation: handle.incarnation, pid: handle.pid });
    const sameDriver = await again.page();
    expect(await cityField(sameDriver)).toBe('Lisbon');
    await sameDriver.navigate(server.url('/next'));
    expect((await sameDriver.observe()).title).toBe('Next');
    expect(await second.keptDeviceIds()).toEqual([]);

    await second.shutdown();
    expect(await isRunning(handle.pid!)).toBe(false);
    expect(await processGroupMembers(handle.pid!)).toEqual([]);
    expect(await keepersOf(dataDir)).toEqual([]);
    expect(existsSync(socketPath)).toBe(false);
  }, 90_000);

  it('re-attach after the process that launched them was killed with SIGKILL', async () => {
    const dataDir = path.join(temp.dir, 'killed');
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'test/support/launch-and-wait.ts'), dataDir, 'crash-device', server.url('/form'), 'Porto'], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const launched = await new Promise<{ pid: number; incarnation: string }>((resolve, reject) => {
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('\n')) resolve(JSON.parse(output) as { pid: number; incarnation: string });
      });
      child.once('exit', (code) => reject(new Error(`the launcher exited (${code})`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(await isRunning(launched.pid)).toBe(true);

    const provider = localProvider(dataDir);
    const handle = await provider.launch({ deviceId: 'crash-device', orgId: 'org-1' });
    expect(handle).toMatchObject({ reattached: true, incarnation: launched.incarnation, pid: launched.pid });
    expect(await cityField(await handle.page())).toBe('Porto');
    await provider.shutdown();
    expect(await isRunning(launched.pid)).toBe(false);
  }, 90_000);

  it('are reaped when no service comes back within the keep time: no keeper, Chromium or process of its uid left', async () => {
    const dataDir = path.join(temp.dir, 'reaped');
    const provider = localProvider(dataDir, 2);
    const handle = await provider.launch({ deviceId: 'reaped-device', orgId: 'org-1' });
    const pid = handle.pid!;
    const uid = asRoot ? await uidOf(pid) : null;
    await provider.detach();
    expect(await keepersOf(dataDir)).toHaveLength(1);
    // Chromium's own children end just after it, on a loaded machine a moment later.
    expect(await waitUntil(async () => !(await isRunning(pid)) && (await keepersOf(dataDir)).length === 0 && (await processGroupMembers(pid)).length === 0, 10_000)).toBe(true);
    if (uid !== null) expect(await processesOfUser(uid)).toEqual([]);
    expect(existsSync(keeperSocket(keepersDirectory(dataDir), 'reaped-device'))).toBe(false);
    // The next start finds nothing kept and starts afresh.
    const next = localProvider(dataDir);
    expect(await next.keptDeviceIds()).toEqual([]);
    const fresh = await next.launch({ deviceId: 'reaped-device', orgId: 'org-1' });
    expect(fresh.reattached).toBe(false);
    expect(fresh.incarnation).not.toBe(handle.incarnation);
    await next.shutdown();
  }, 90_000);

  it('pool.detach() leaves device browsers running and closes warm ones; pool.shutdown() leaves nothing', async () => {
    const dataDir = path.join(temp.dir, 'pool');
    const pool = new BrowserPool(localProvider(dataDir), { maxBrowsers: 3, warmBrowsers: 1 });
    const handle = await pool.launch('pool-device', 'org-1');
    pool.startWarmBrowsers();
    expect(await waitUntil(async () => pool.warmReady === 1, 20_000)).toBe(true);
    expect(await keepersOf(dataDir)).toHaveLength(2);
    await pool.detach();
    expect(await isRunning(handle.pid!)).toBe(true);
    expect(await keepersOf(dataDir)).toHaveLength(1);

    const next = new BrowserPool(localProvider(dataDir), { maxBrowsers: 3 });
    expect(await next.keptDeviceIds()).toEqual(['pool-device']);
    const again = await next.launch('pool-device', 'org-1');
    expect(again.incarnation).toBe(handle.incarnation);
    await next.shutdown();
    expect(await isRunning(handle.pid!)).toBe(false);
    expect(await keepersOf(dataDir)).toEqual([]);
  }, 90_000);

  it('serve one client at a time, and undo what a gone client left: no session on its page, no auto-attach (which would pause) on a new one', async () => {
    const dataDir = path.join(temp.dir, 'leftovers');
    const provider = localProvider(dataDir);
    const handle = await provider.launch({ deviceId: 'leftover-device', orgId: 'org-1' });
    const socketPath = keeperSocket(keepersDirectory(dataDir), 'leftover-device');
    await expect(KeeperConnection.open(socketPath, 'leftover-device')).rejects.toBeInstanceOf(KeeperBusyError);
    await provider.detach();

    // A client that asks for every new page to wait for its debugger, then dies.
    const careless = (await KeeperConnection.open(socketPath, 'leftover-device'))!;
    expect(careless.identity.incarnation).toBe(handle.incarnation);
    expect(await command(careless, 1, 'Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true })).toEqual({});
    careless.close();
    await careless.closed;

    const next = (await KeeperConnection.open(socketPath, 'leftover-device'))!;
    // The same id as the gone client's first command: the answer is this client's own.
    const { targetId } = (await command(next, 1, 'Target.createTarget', { url: server.url('/next') })) as { targetId: string };
    type TargetInfo = { targetId: string; type: string; title: string; attached: boolean };
    const pages = async () => ((await command(next, 2, 'Target.getTargets', {})) as { targetInfos: TargetInfo[] }).targetInfos.filter((target) => target.type === 'page');
    expect(await waitUntil(async () => (await pages()).find((target) => target.targetId === targetId)?.title === 'Next', 10_000)).toBe(true);
    // Nothing attached: neither the sessions the gone clients held on the device's page, nor an auto-attach to the new one.
    expect((await pages()).map((target) => target.attached)).toEqual([false, false]);
    next.close();
    await next.closed;
    await localProvider(dataDir).closeKept('leftover-device');
  });

  it('discard() ends a browser whose profile is deleted next without the close that flushes it; close() flushes', async () => {
    const dataDir = path.join(temp.dir, 'discarded');
    const provider = localProvider(dataDir);
    // Chromium writes cookies to its profile every 30 s, and at a graceful close.
    const cookiesSaved = async (deviceId: string) => (await readFile(path.join(localProfilesRoot(dataDir), deviceId, 'Default', 'Cookies')).catch(() => Buffer.alloc(0))).includes('device_session');
    const withCookie = async (deviceId: string) => {
      const handle = await provider.launch({ deviceId, orgId: 'org-1' });
      await (await handle.page()).navigate(server.url('/set-cookie'));
      return handle;
    };

    const closed = await withCookie('closed-device');
    await closed.close();
    expect(await cookiesSaved('closed-device')).toBe(true);

    const discarded = await withCookie('discarded-device');
    await discarded.discard();
    expect(await isRunning(discarded.pid!)).toBe(false);
    expect(await processGroupMembers(discarded.pid!)).toEqual([]);
    expect(await keepersOf(dataDir)).toEqual([]);
    expect(await cookiesSaved('discarded-device')).toBe(false);
    await provider.shutdown();
  });

  it('closeKept() closes a kept browser no device of this host needs any more', async () => {
    const dataDir = path.join(temp.dir, 'stray');
    const first = localProvider(dataDir);
    const handle = await first.launch({ deviceId: 'stray-device', orgId: 'org-1' });
    await first.detach();
    const second = localProvider(dataDir);
    await second.closeKept('stray-device');
    expect(await isRunning(handle.pid!)).toBe(false);
    expect(await keepersOf(dataDir)).toEqual([]);
    expect(await second.keptDeviceIds()).toEqual([]);
  });
});


describe('browserless browsers under keepers', () => {
  let browserless: BrowserlessServer;
  beforeAll(async () => {
    browserless = await startBrowserlessServer({ concurrent: 2 });
  });
  afterAll(async () => {
    await browserless?.stop();
  });

  function remoteProvider(dataDir: string, store: DeviceStateStore): BrowserlessProvider {
    return new BrowserlessProvider({ endpoint: browserless.url, deviceStates: store, egress: null, dataDir, keepSecs: 30 });
  }

  async function browserlessSessions(): Promise<unknown[]> {
    const url = new URL(browserless.url);
    const response = await fetch(`http://${url.host}/sessions?token=${url.searchParams.get('token')}`);
    // While a browser closes, browserless may fail to list it: asked again.
    return response.ok ? ((await response.json()) as unknown[]) : ['unlisted'];
  }

  it('re-attach on the same data directory, and another host adopts the device from its location', async () => {
    const store = new MemoryStateStore();
    const hostA = path.join(temp.dir, 'remote-a');
    const first = remoteProvider(hostA, store);
    const handle: BrowserHandle = await first.launch({ deviceId: 'remote-device', orgId: 'org-1' });
    expect(handle.reattached).toBe(false);
    expect(handle.location).toMatch(/^browserless:/);
    const driver = await handle.page();
    await driver.navigate(server.url('/form'));
    await driver.type('Braga', 'Your city');
    await first.detach();

    // The same host restarted: the keeper still holds the browser.
    const restarted = remoteProvider(hostA, store);
    expect(await restarted.keptDeviceIds()).toEqual(['remote-device']);
    const again = await restarted.launch({ deviceId: 'remote-device', orgId: 'org-1' });
    expect(again).toMatchObject({ reattached: true, incarnation: handle.incarnation, location: handle.location });
    expect(await cityField(await again.page())).toBe('Braga');
    // Host A's service dies for good (its keeper stays until reaped); host B adopts the device.
    await restarted.detach();

    const hostB = path.join(temp.dir, 'remote-b');
    const adopter = remoteProvider(hostB, store);
    const adopted = await adopter.launch({ deviceId: 'remote-device', orgId: 'org-1', adopt: handle.location! });
    expect(adopted).toMatchObject({ reattached: true, incarnation: handle.incarnation });
    const adoptedDriver = await adopted.page();
    expect(await cityField(adoptedDriver)).toBe('Braga');
    await adoptedDriver.navigate(server.url('/next'));
    expect((await adoptedDriver.observe()).title).toBe('Next');

    // Host A's keeper leaves the browser (as its reaping does): the adopter still drives it.
    await remoteProvider(hostA, store).closeKept('remote-device');
    expect((await adoptedDriver.observe()).title).toBe('Next');
    await adopter.shutdown();
    expect(await waitUntil(async () => (await browserlessSessions()).length === 0, 10_000)).toBe(true);
    expect(await keepersOf(hostA)).toEqual([]);
    expect(await keepersOf(hostB)).toEqual([]);
  }, 120_000);

  it('discard() saves nothing of a device whose state is deleted next; close() saves its cookies', async () => {
    const store = new MemoryStateStore();
    const provider = remoteProvider(path.join(temp.dir, 'remote-discard'), store);
    for (const [deviceId, end] of [['closed-remote', 'close'], ['discarded-remote', 'discard']] as const) {
      const handle = await provider.launch({ deviceId, orgId: 'org-1' });
      await (await handle.page()).navigate(server.url('/set-cookie'));
      await handle[end]();
    }
    expect(JSON.stringify(store.states.get('closed-remote'))).toContain('device_session');
    expect(store.states.has('discarded-remote')).toBe(false);
    await provider.shutdown();
    expect(await waitUntil(async () => (await browserlessSessions()).length === 0, 10_000)).toBe(true);
  }, 60_000);
});
