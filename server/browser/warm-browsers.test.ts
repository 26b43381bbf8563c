import { expect, it } from 'vitest';
import { FakeBrowserHandle } from '../../test/support/fake-browser-provider';
import type { BrowserHandle, WarmLauncher } from './types';
import { WarmBrowsers } from './warm-browsers';

/** A launcher whose launches the test settles; records what was handed over and discarded. */
class ScriptedLauncher implements WarmLauncher {
  readonly launches: Array<{ id: string; resolve: (handle: BrowserHandle) => void; reject: (error: Error) => void }> = [];
  readonly discarded: string[] = [];

  launch(profileId: string): Promise<BrowserHandle> {
    return new Promise((resolve, reject) => this.launches.push({ id: profileId, resolve, reject }));
  }

  async handOver(): Promise<void> {}

  async discard(profileId: string): Promise<void> {
    this.discarded.push(profileId);
  }

  settleAll(): void {
    for (const launch of this.launches.splice(0)) launch.resolve(new FakeBrowserHandle(launch.id));
  }
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

it('fills up to the target within the room it is given, and hands each browser out once', async () => {
  const launcher = new ScriptedLauncher();
  let capacity = 1;
  const warm: WarmBrowsers = new WarmBrowsers(launcher, { target: 3, room: () => capacity - warm.size, deviceLaunches: () => 0 });
  warm.fill();
  expect(launcher.launches).toHaveLength(0); // not started yet
  warm.start();
  expect(launcher.launches).toHaveLength(1);
  capacity = 0;
  warm.fill();
  expect(warm.size).toBe(1);
  launcher.settleAll();
  await settled();
  expect(warm.readyCount).toBe(1);
  const taken = warm.take()!;
  expect((await taken.handle).deviceId).toBe(taken.id);
  expect(warm.size).toBe(0);
  expect(warm.take()).toBeNull(); // never handed out twice
  await warm.shutdown();
  expect(launcher.discarded).toEqual([]); // a taken browser is its device's, not the pool's
});

it('hands out a ready browser first, else the one launching longest, whose failure is its taker\'s', async () => {
  const launcher = new ScriptedLauncher();
  const failures: unknown[] = [];
  const warm: WarmBrowsers = new WarmBrowsers(launcher, { target: 3, room: () => 3 - warm.size, deviceLaunches: () => 0, onLaunchFailed: (error) => failures.push(error) });
  warm.start();
  const [oldest, middle, newest] = launcher.launches.splice(0);
  newest!.resolve(new FakeBrowserHandle(newest!.id));
  await settled();
  expect(warm.take()!.id).toBe(newest!.id); // the ready one, though launched last
  const launching = warm.take()!;
  expect(launching.id).toBe(oldest!.id); // then the one that started first
  oldest!.reject(new Error('no chromium'));
  await expect(launching.handle).rejects.toThrow('no chromium');
  await settled();
  expect(failures).toEqual([]); // not the pool's failure: it does not pause its refills
  expect(warm.size).toBe(1);
  expect(warm.take()!.id).toBe(middle!.id);
  await warm.shutdown();
});

it('evicts the newest browser, closing it and discarding its profile', async () => {
  const launcher = new ScriptedLauncher();
  const warm: WarmBrowsers = new WarmBrowsers(launcher, { target: 2, room: () => 2 - warm.size, deviceLaunches: () => 0 });
  warm.start();
  const [older, newer] = launcher.launches.map((launch) => launch.id);
  launcher.settleAll();
  await settled();
  await warm.evict();
  expect(launcher.discarded).toEqual([newer]);
  expect(warm.size).toBe(1);
  expect(warm.take()!.id).toBe(older);
  await warm.shutdown();
});

it('pauses after a failed launch instead of relaunching in a loop', async () => {
  const launcher = new ScriptedLauncher();
  const failures: unknown[] = [];
  const warm = new WarmBrowsers(launcher, { target: 1, room: () => 1, deviceLaunches: () => 0, retryAfterFailureMs: 100, onLaunchFailed: (error) => failures.push(error) });
  warm.start();
  launcher.launches.splice(0)[0]!.reject(new Error('no chromium'));
  await settled();
  expect(failures).toHaveLength(1);
  warm.fill();
  expect(launcher.launches).toHaveLength(0);
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(launcher.launches).toHaveLength(1);
  launcher.settleAll();
  await warm.shutdown();
});
