import { execFile } from 'node:child_process';
import { readFile, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processGroupMembers } from '../../server/os/processes';
import { parsePublicId } from '../../server/domain/ids';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// A device's Chromium, as the service starts it: every process of its group runs under
// an unprivileged uid with Chromium's sandbox on, and the device's profile is open to
// that uid alone. As root, each browser has a uid of its own.
const run = promisify(execFile);
const runsAsRoot = process.getuid?.() === 0;
let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
const devices = new DeviceTracker(() => api);

beforeAll(async () => {
  test = await startTestService({ CHROMIUM_PATH: '/usr/bin/chromium' });
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:devices:read', 'operator:devices:write']));
});
afterAll(async () => {
  await devices.deleteAll();
  await test?.stop();
});

interface BrowserProcess {
  pid: number;
  /** Real, effective, saved and filesystem uids. */
  uids: number[];
  /** Command-line words: processes forked by the zygote rewrite theirs as one space-separated string. */
  args: string[];
  userNamespace: string;
  /** 2: a seccomp-bpf filter confines the process. */
  seccomp: number;
}

async function browserProcesses(publicId: string): Promise<BrowserProcess[]> {
  const leader = test.service.services.browserPool.get(parsePublicId('device', publicId)!)!.pid!;
  return Promise.all(
    (await processGroupMembers(leader)).map(async (pid) => {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      return {
        pid,
        uids: /^Uid:\s+(.*)$/m.exec(status)![1]!.trim().split(/\s+/).map(Number),
        args: (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split(/[\0 ]/),
        userNamespace: await readlink(`/proc/${pid}/ns/user`),
        seccomp: Number(/^Seccomp:\s+(\d+)/m.exec(status)![1]),
      };
    }),
  );
}

const profileOf = (publicId: string) => path.join(test.dataDir, 'profiles', parsePublicId('device', publicId)!);

describe('a device browser', () => {
  it('runs every process unprivileged, sandboxed, without --no-sandbox, on a profile only its uid may enter', async () => {
    const device = await devices.create(tenant.spaceId);
    // A page the agent can observe has a renderer behind it.
    await (await test.service.services.browserPool.get(parsePublicId('device', device)!)!.page()).observe();
    const processes = await browserProcesses(device);
    // The browser, zygotes, GPU/utility processes and at least one renderer.
    expect(processes.length).toBeGreaterThanOrEqual(4);
    const browserUid = processes[0]!.uids[0]!;
    expect(browserUid).not.toBe(0);
    for (const { uids, args } of processes) {
      expect(uids).toEqual([browserUid, browserUid, browserUid, browserUid]);
      expect(args).not.toContain('--no-sandbox');
    }
    // Chromium's sandbox engaged: renderers in a user namespace of their own, under seccomp-bpf.
    const ownNamespace = await readlink('/proc/self/ns/user');
    const renderers = processes.filter(({ args }) => args.includes('--type=renderer'));
    expect(renderers.length).toBeGreaterThan(0);
    for (const renderer of renderers) {
      expect(renderer.userNamespace).not.toBe(ownNamespace);
      expect(renderer.seccomp).toBe(2);
    }

    const profile = await stat(profileOf(device));
    expect(profile.mode & 0o777).toBe(0o700);
    expect(profile.uid).toBe(browserUid);
  });

  it.skipIf(!runsAsRoot)('as root, has a uid of its own: it cannot enter another device’s profile, and a slept device’s profile is root’s again', async () => {
    const [first, second] = [await devices.create(tenant.spaceId), await devices.create(tenant.spaceId)];
    const [firstUid, secondUid] = [(await browserProcesses(first))[0]!.uids[0]!, (await browserProcesses(second))[0]!.uids[0]!];
    expect(firstUid).not.toBe(secondUid);
    expect((await stat(profileOf(second))).uid).toBe(secondUid);

    const gid = (await stat(profileOf(first))).gid;
    const asFirstBrowser = (target: string) =>
      run('setpriv', [`--reuid=${firstUid}`, `--regid=${gid}`, '--clear-groups', 'ls', target]).then(
        () => 'entered',
        () => 'refused',
      );
    expect(await asFirstBrowser(profileOf(first))).toBe('entered');
    expect(await asFirstBrowser(profileOf(second))).toBe('refused');
    // Neither can the browsers list the profiles (device ids) or the data directory.
    expect(await asFirstBrowser(path.dirname(profileOf(first)))).toBe('refused');
    expect(await asFirstBrowser(test.dataDir)).toBe('refused');
    // Nor the keepers' sockets, behind which each browser's DevTools endpoint is.
    expect(await asFirstBrowser(path.join(test.dataDir, 'keepers'))).toBe('refused');

    expect((await api('POST', `/v1/devices/${second}/sleep`)).status).toBe(202);
    const slept = await stat(profileOf(second));
    expect([slept.uid, slept.mode & 0o777]).toEqual([0, 0o700]);
  });
});
