import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { isRunning } from '../../server/os/processes';
import type { RunningService } from '../../server/assembly/start-service';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startServiceOn } from '../support/test-service';

// A server killed with SIGKILL leaves its warm browsers running under their keepers
// (like every browser) and their profiles on disk. Warm browsers belong to no device, so
// the next start on the data directory must close them, not re-attach, and remove their
// profiles before it warms new ones.
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

const profilesRoot = () => path.join(dataDir!, 'profiles');

/** The warm profiles on disk and the Chromium each one's pid file names. */
async function warmBrowsers(): Promise<Array<{ id: string; pid: number | null }>> {
  const markers = path.join(profilesRoot(), '.warm');
  if (!existsSync(markers)) return [];
  return Promise.all(
    (await readdir(markers)).map(async (id) => {
      const pidFile = path.join(profilesRoot(), id, 'chromium.pid');
      return { id, pid: existsSync(pidFile) ? Number((await readFile(pidFile, 'utf8')).trim()) : null };
    }),
  );
}

async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== null) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('after a SIGKILLed server, a start kills its warm browsers and removes their profiles', async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-warm-crash-'));
  child = await startHostProcess({ databaseUrl: database.url, dataDir, port: await freePort(), env: { OPERATOR_WARM_BROWSERS: '2' } });

  const left = await waitFor('two running warm browsers', async () => {
    const warm = await warmBrowsers();
    const running = await Promise.all(warm.map(async ({ pid }) => pid !== null && (await isRunning(pid))));
    return warm.length === 2 && running.every(Boolean) ? warm : null;
  });
  await child.stop('SIGKILL');
  // Orphans now: nothing of the dead server closed them.
  for (const { pid } of left) expect(await isRunning(pid!)).toBe(true);

  restarted = await startServiceOn(database.url, dataDir, { OPERATOR_WARM_BROWSERS: '2' });
  for (const { id, pid } of left) {
    expect(await isRunning(pid!)).toBe(false);
    expect(existsSync(path.join(profilesRoot(), id))).toBe(false);
    expect(existsSync(path.join(profilesRoot(), '.owners', id))).toBe(false);
  }
  const fresh = await waitFor('two new warm browsers', async () => {
    const warm = await warmBrowsers();
    return warm.length === 2 && restarted!.services.browserPool.warmReady === 2 ? warm : null;
  });
  expect(fresh.map(({ id }) => id).filter((id) => left.some((old) => old.id === id))).toEqual([]);

  // A clean stop leaves none either.
  await restarted.close();
  restarted = undefined;
  for (const { id, pid } of fresh) {
    expect(await isRunning(pid!)).toBe(false);
    expect(existsSync(path.join(profilesRoot(), id))).toBe(false);
  }
  expect(await warmBrowsers()).toEqual([]);
}, 180_000);
