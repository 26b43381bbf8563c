import { execFile, spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BROWSER_ISOLATION, CHROMIUM_PATH, makeTempDir } from '../../test/support/browser-fixtures.js';
import { BrowserPool } from './pool.js';
import { createBrowserProvider } from './provider-factory.js';

// As root, a new profile is handed to its browser's uid, and a wake claims the uid its
// profile already belongs to when that uid is free, and then hands over only the
// profile's top folder; under any other uid the whole tree is handed over again, so the
// browser owns every file it may need.

let temp: Awaited<ReturnType<typeof makeTempDir>>;

beforeAll(async () => {
  temp = await makeTempDir('profile-owner-');
});

afterAll(async () => {
  await temp?.remove();
});

async function uidOf(pid: number): Promise<number> {
  return Number(/^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]);
}

/** Files of the tree not owned by `uid` (the pid file is root's, written by the service). */
async function notOwnedBy(dir: string, uid: number): Promise<string[]> {
  const { stdout } = await promisify(execFile)('find', [dir, '-not', '-user', String(uid), '-not', '-name', 'chromium.pid']);
  return stdout.split('\n').filter((line) => line !== '');
}

it.skipIf(process.getuid?.() !== 0)('relaunches under the uid the profile belongs to when it is free, and hands the whole tree to another uid otherwise', async () => {
  const pool = new BrowserPool(
    createBrowserProvider({ kind: 'local', chromiumPath: CHROMIUM_PATH, browserlessUrl: null, dataDir: temp.dir, browserUsers: BROWSER_ISOLATION.users, allowUnsandboxed: false, egress: null, keepSecs: BROWSER_ISOLATION.keepSecs }),
    { maxBrowsers: 2 },
  );
  const profile = path.join(temp.dir, 'profiles', 'owned');
  try {
    const first = await pool.launch('owned', 'org-1');
    await (await first.page()).navigate('about:blank');
    const uid = await uidOf(first.pid!);
    // A new profile is handed over without a walk: its folder and HOME, then what Chromium wrote as that uid.
    expect(await notOwnedBy(profile, uid)).toEqual([]);
    await pool.close('owned');
    expect((await stat(profile)).uid).toBe(0); // closed to every uid while stopped

    const again = await pool.launch('owned', 'org-1');
    expect(await uidOf(again.pid!)).toBe(uid);
    expect(await notOwnedBy(profile, uid)).toEqual([]);
    await pool.close('owned');

    // Another process holds that uid now: the profile goes to another one, every file of it.
    const holder = spawn('flock', ['--nonblock', `/run/browser-device-operator/browser-uids/${uid}`, 'sleep', '30'], { stdio: 'ignore', detached: true });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const moved = await pool.launch('owned', 'org-1');
      const other = await uidOf(moved.pid!);
      expect(other).not.toBe(uid);
      expect(await notOwnedBy(profile, other)).toEqual([]);
      await pool.close('owned');
    } finally {
      process.kill(-holder.pid!, 'SIGKILL');
    }
  } finally {
    await pool.shutdown();
  }
}, 120_000);
