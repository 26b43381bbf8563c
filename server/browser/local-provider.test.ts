import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findChromium,
  killOrphans,
  PID_FILE_NAME,
  reclaimProfile,
} from './chromium-process.js';
import { isRunning, processGroupMembers, waitForExit } from '../os/processes.js';
import { systemStateDirectoryFor } from '../os/system-state-directory.js';
import { LocalBrowserProvider } from './local-provider.js';
import { BrowserPool, CapacityExhaustedError, DeviceOrganizationMismatchError } from './pool.js';
import { createBrowserProvider } from './provider-factory.js';
import { BROWSER_ISOLATION, CHROMIUM_PATH, makeTempDir, startPageServer, type PageServer } from '../../test/support/browser-fixtures.js';
import { ActionError, BrowserLaunchError } from './types.js';

let server: PageServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;

beforeAll(async () => {
  server = await startPageServer();
  temp = await makeTempDir('local-provider-');
});

afterAll(async () => {
  await server?.close();
  await temp?.remove();
});

function profileDir(deviceId: string): string {
  return path.join(temp.dir, 'profiles', deviceId);
}

describe('local provider through the pool', () => {
  it('keeps cookies across close and launch, leaves no process behind, and destroy removes the profile', async () => {
    const pool = new BrowserPool(
      createBrowserProvider({ kind: 'local', chromiumPath: CHROMIUM_PATH, browserlessUrl: null, dataDir: temp.dir, browserUsers: BROWSER_ISOLATION.users, allowUnsandboxed: false, egress: null, keepSecs: BROWSER_ISOLATION.keepSecs }),
      { maxBrowsers: 2 },
    );
    const first = await pool.launch('sleeper', 'org-1');
    expect(first.pid).toBeGreaterThan(0);
    expect(await readFile(path.join(profileDir('sleeper'), PID_FILE_NAME), 'utf8')).toBe(`${first.pid}\n`);
    await (await first.page()).navigate(server.url('/set-cookie'));
    const firstPid = first.pid!;
    await pool.close('sleeper');
    expect(await isRunning(firstPid)).toBe(false);
    expect(await processGroupMembers(firstPid)).toEqual([]);
    expect(existsSync(path.join(profileDir('sleeper'), PID_FILE_NAME))).toBe(false);
    expect(pool.get('sleeper')).toBeUndefined();

    const second = await pool.launch('sleeper', 'org-1');
    expect(second.pid).not.toBe(firstPid);
    const driver = await second.page();
    await driver.navigate(server.url('/show-cookie'));
    expect(await driver.textOf('#cookie')).toContain('device_session=kept');

    const secondPid = second.pid!;
    // Chromium's socket lives in a folder of its own under /tmp, which a killed browser leaves.
    const socketFolder = path.dirname(await readlink(path.join(profileDir('sleeper'), 'SingletonSocket')));
    expect(socketFolder).toMatch(/^\/tmp\/org\.chromium\.Chromium\./);
    await pool.destroy('sleeper');
    expect(await isRunning(secondPid)).toBe(false);
    expect(existsSync(profileDir('sleeper'))).toBe(false);
    expect(existsSync(socketFolder)).toBe(false);
    await pool.shutdown();
  });

  it('shares one launch between concurrent callers, enforces capacity and organization, and reports a killed browser as lost', async () => {
    const pool = new BrowserPool(new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir: temp.dir, ...BROWSER_ISOLATION, egress: null }), {
      maxBrowsers: 1,
      retryAfterSeconds: 7,
    });
    const lost: string[] = [];
    pool.onDeviceLost((deviceId) => lost.push(deviceId));

    const [a, b] = await Promise.all([pool.launch('victim', 'org-1'), pool.launch('victim', 'org-1')]);
    expect(a).toBe(b);
    expect(pool.get('victim')).toBe(a);
    await expect(pool.launch('victim', 'org-2')).rejects.toBeInstanceOf(DeviceOrganizationMismatchError);
    const refused = await pool.launch('other', 'org-1').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CapacityExhaustedError);
    expect((refused as CapacityExhaustedError).retryAfterSeconds).toBe(7);

    const driver = await a.page();
    await driver.navigate(server.url('/next'));
    const disconnected = new Promise<void>((resolve) => a.onDisconnected(resolve));
    const pid = a.pid!;
    process.kill(pid, 'SIGKILL');
    await disconnected;
    expect(lost).toEqual(['victim']);
    expect(pool.get('victim')).toBeUndefined();
    const error = await driver.observe().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ActionError);
    expect((error as ActionError).code).toBe('browser_gone');
    await waitForExit(pid);
    await expect.poll(() => processGroupMembers(pid)).toEqual([]);

    // The lost browser's slot is free again.
    const other = await pool.launch('other', 'org-1');
    expect(other.pid).toBeGreaterThan(0);
    await pool.shutdown();
    expect(await isRunning(other.pid!)).toBe(false);
    expect(lost).toEqual(['victim']);
  });
});

describe('crash recovery', () => {
  it('killOrphans kills a Chromium left by a previous run and spares unrelated pids', async () => {
    const orphanProfile = profileDir('orphan');
    await mkdir(orphanProfile, { recursive: true });
    const orphan = spawn(
      CHROMIUM_PATH,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-crash-reporter',
        `--user-data-dir=${orphanProfile}`,
        'about:blank',
      ],
      { detached: true, stdio: 'ignore' },
    );
    const orphanPid = orphan.pid!;
    await writeFile(path.join(orphanProfile, PID_FILE_NAME), `${orphanPid}\n`);
    // /usr/bin/chromium is a shell wrapper that execs the real binary; wait for the exec.
    await expect
      .poll(async () => path.basename((await readFile(`/proc/${orphanPid}/cmdline`, 'utf8')).split('\0')[0] ?? ''))
      .toBe('chromium');

    const bystanderProfile = profileDir('bystander');
    await mkdir(bystanderProfile, { recursive: true });
    const bystander = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    await writeFile(path.join(bystanderProfile, PID_FILE_NAME), `${bystander.pid}\n`);

    try {
      expect(await killOrphans(temp.dir)).toEqual([orphanPid]);
      expect(await isRunning(orphanPid)).toBe(false);
      expect(await isRunning(bystander.pid!)).toBe(true);
      expect(existsSync(path.join(orphanProfile, PID_FILE_NAME))).toBe(false);
    } finally {
      bystander.kill('SIGKILL');
      if (await isRunning(orphanPid)) process.kill(-orphanPid, 'SIGKILL');
    }
  });

  it('launches on a profile whose SingletonLock was left by a crash elsewhere', async () => {
    const deviceProfile = profileDir('stale-lock');
    await mkdir(deviceProfile, { recursive: true });
    await symlink('some-other-host-424242', path.join(deviceProfile, 'SingletonLock'));
    const provider = new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir: temp.dir, ...BROWSER_ISOLATION, egress: null });
    const handle = await provider.launch({ deviceId: 'stale-lock', orgId: 'org-1' });
    try {
      await (await handle.page()).navigate(server.url('/next'));
    } finally {
      await provider.shutdown();
    }
    expect(await isRunning(handle.pid!)).toBe(false);
  });

  it("removes the socket folder a profile's SingletonSocket link names only when Chromium could have made it for that profile's uid", async () => {
    const linkTo = async (name: string, target: string) => {
      const deviceProfile = profileDir(name);
      await mkdir(deviceProfile, { recursive: true });
      await symlink(path.join(target, 'SingletonSocket'), path.join(deviceProfile, 'SingletonSocket'));
      return deviceProfile;
    };
    const chromiumShaped = await mkdtemp('/tmp/org.chromium.Chromium.');
    const elsewhere = await mkdtemp(path.join(temp.dir, 'org.chromium.Chromium.'));
    try {
      // Not under /tmp, or not the profile owner's: left as it is.
      await reclaimProfile(await linkTo('link-elsewhere', elsewhere), null);
      await reclaimProfile(await linkTo('link-to-another-uid', chromiumShaped), process.getuid!() + 1);
      expect([existsSync(elsewhere), existsSync(chromiumShaped)]).toEqual([true, true]);
      const deviceProfile = await linkTo('link-to-its-own', chromiumShaped);
      await reclaimProfile(deviceProfile, null);
      expect(existsSync(chromiumShaped)).toBe(false);
      expect(existsSync(path.join(deviceProfile, 'SingletonSocket'))).toBe(false);
    } finally {
      await rm(chromiumShaped, { recursive: true, force: true });
    }
  });

  it('explains a missing Chromium in one line', () => {
    const error = (() => {
      try {
        findChromium('/nonexistent/chromium');
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(BrowserLaunchError);
    expect((error as BrowserLaunchError).retryable).toBe(false);
    expect((error as BrowserLaunchError).message).toMatch(/apt-get install chromium/);
    expect((error as BrowserLaunchError).message).not.toContain('\n');
    expect(findChromium(null)).toMatch(/chrom/);
  });

  it('closes, before any browser starts, a profile a former version left open', async () => {
    const leftOpen = profileDir('left-open');
    await mkdir(leftOpen, { recursive: true });
    await chmod(leftOpen, 0o755);
    expect(await new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir: temp.dir, ...BROWSER_ISOLATION, egress: null }).start()).toEqual([]);
    const closed = await stat(leftOpen);
    expect([closed.uid, closed.mode & 0o777]).toEqual([process.getuid!(), 0o700]);
  });

  it.skipIf(process.getuid?.() !== 0)('as root, keeps profiles under /var/lib when a folder above the data directory is private, moving older ones there once', async () => {
    // A checkout under /root: the browsers' uids cannot pass the folder above the data directory.
    const privateFolder = await makeTempDir('private-');
    const dataDir = path.join(privateFolder.dir, 'data');
    await mkdir(path.join(dataDir, 'profiles', 'older'), { recursive: true });
    const profilesRoot = path.join(systemStateDirectoryFor(dataDir), 'profiles');
    try {
      const provider = new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir, ...BROWSER_ISOLATION, egress: null });
      await provider.start();
      expect(existsSync(path.join(dataDir, 'profiles'))).toBe(false);
      const handle = await provider.launch({ deviceId: 'older', orgId: 'org-1' });
      expect(await readFile(path.join(profilesRoot, 'older', PID_FILE_NAME), 'utf8')).toBe(`${handle.pid}\n`);
      await provider.shutdown();
    } finally {
      await privateFolder.remove();
      await rm(systemStateDirectoryFor(dataDir), { recursive: true, force: true });
    }
  });

  it('refuses device ids that would escape the profiles directory', async () => {
    const provider = new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir: temp.dir, ...BROWSER_ISOLATION, egress: null });
    await expect(provider.launch({ deviceId: '../escape', orgId: 'org-1' })).rejects.toBeInstanceOf(BrowserLaunchError);
  });
});
