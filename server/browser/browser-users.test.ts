import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../core/config.js';
import { accountClash, BrowserUsers } from './browser-users.js';
import { isRunning, processesOfUser } from '../os/processes.js';
import { SETPRIV_PATH } from './chromium-command.js';

const range = { firstUid: 60601, lastUid: 60999, gid: 60600 };
// A process started to hold a uid or run under one may take seconds to be seen on a loaded
// host (vitest's one-second default failed there).
const SEEN_WITHIN = { timeout: 10_000 };

describe('browser users', () => {
  it('refuses a range holding an account’s uid, or a gid a group uses, naming it', () => {
    const passwd = 'root:x:0:0:root:/root:/bin/bash\nalice:x:60700:60700::/home/alice:/bin/sh\n';
    const group = 'root:x:0:\nbrowsers:x:60600:\n';
    expect(accountClash(range, 'root:x:0:0:root:/root:/bin/bash\n', 'root:x:0:\n')).toBeNull();
    expect(accountClash(range, passwd, 'root:x:0:\n')).toMatch(/uid 60700 of account "alice" is in OPERATOR_BROWSER_UIDS/);
    expect(accountClash(range, 'root:x:0:0::/:/bin/sh\n', group)).toMatch(/gid 60600 of group "browsers" is OPERATOR_BROWSER_GID/);
  });

  it('takes its range from the configuration, refusing one smaller than the browsers it must run', () => {
    expect(loadConfig({}).browser.users).toEqual(range);
    expect(loadConfig({ OPERATOR_BROWSER_UIDS: '70000-70009', OPERATOR_BROWSER_GID: '69999' }).browser.users).toEqual({ firstUid: 70000, lastUid: 70009, gid: 69999 });
    expect(() => loadConfig({ OPERATOR_BROWSER_UIDS: '70000-70004' })).toThrow(/OPERATOR_BROWSER_UIDS must hold at least OPERATOR_MAX_BROWSERS/);
    expect(() => loadConfig({ OPERATOR_BROWSER_UIDS: '0-100' })).toThrow(/OPERATOR_BROWSER_UIDS/);
    expect(() => loadConfig({ OPERATOR_BROWSER_UIDS: 'many' })).toThrow(/OPERATOR_BROWSER_UIDS/);
    expect(() => loadConfig({ OPERATOR_BROWSER_GID: '60700' })).toThrow(/OPERATOR_BROWSER_GID must lie outside/);
  });

  /**
   * Holds a uid's claim as another service instance would: flock(1) and its `sleep` in a
   * process group of their own, so killing the group frees the lock (the `sleep` holds it too).
   */
  const holdUid = (uid: number) => spawn('flock', ['--nonblock', `/run/browser-device-operator/browser-uids/${uid}`, 'sleep', '30'], { stdio: 'ignore', detached: true });

  // Outside the default range (60601-60999), which the services other tests start claim
  // from at random.
  const testRange = { firstUid: 61000, lastUid: 61002, gid: 60600 };

  it.skipIf(process.getuid?.() !== 0)('hands each claim its own uid, skips uids other processes hold, and kills what a uid left running', async () => {
    // Another process (as another service instance would) holds the range's first uid.
    const other = holdUid(testRange.firstUid);
    const users = new BrowserUsers(testRange);
    const onlyFirstUid = new BrowserUsers({ ...testRange, lastUid: testRange.firstUid });
    const firstUidHeld = () => onlyFirstUid.claim().then((claim) => claim.release().then(() => false), () => true);
    try {
      await expect.poll(firstUidHeld, SEEN_WITHIN).toBe(true);
      const first = await users.claim();
      const second = await users.claim();
      expect([first.user.uid, second.user.uid].sort()).toEqual([testRange.firstUid + 1, testRange.firstUid + 2]);
      await expect(users.claim()).rejects.toThrow(/every browser uid .* is in use/);

      // A process that left the browser's process group still runs under its uid.
      const escaped = spawn(SETPRIV_PATH, [`--reuid=${first.user.uid}`, `--regid=${first.user.gid}`, '--clear-groups', 'sleep', '30'], { detached: true, stdio: 'ignore' });
      await expect.poll(() => processesOfUser(first.user.uid), SEEN_WITHIN).toEqual([escaped.pid]);
      await first.release();
      expect(await isRunning(escaped.pid!)).toBe(false);
      const again = await users.claim();
      expect(again.user.uid).toBe(first.user.uid);
      await Promise.all([again.release(), second.release()]);
    } finally {
      process.kill(-other.pid!, 'SIGKILL');
    }
  });

  it.skipIf(process.getuid?.() !== 0)('at start, kills what runs under a uid no live service holds, and leaves a held uid alone', async () => {
    const [abandonedUid, heldUid] = [testRange.firstUid, testRange.firstUid + 1];
    // A live service holds one uid; the other was left by a service killed with its browser's crash handler.
    const holder = holdUid(heldUid);
    const asUid = (uid: number) => spawn(SETPRIV_PATH, [`--reuid=${uid}`, `--regid=${testRange.gid}`, '--clear-groups', 'sleep', '30'], { detached: true, stdio: 'ignore' });
    const abandoned = asUid(abandonedUid);
    const running = asUid(heldUid);
    try {
      await expect.poll(async () => [...(await processesOfUser(abandonedUid)), ...(await processesOfUser(heldUid))].sort(), SEEN_WITHIN).toEqual([abandoned.pid, running.pid].sort());
      await new BrowserUsers(testRange).reclaimAbandoned();
      expect(await isRunning(abandoned.pid!)).toBe(false);
      expect(await isRunning(running.pid!)).toBe(true);
    } finally {
      process.kill(-holder.pid!, 'SIGKILL');
      running.kill('SIGKILL');
      abandoned.kill('SIGKILL');
    }
  });
});
