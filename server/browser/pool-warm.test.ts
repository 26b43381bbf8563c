import { expect, it } from 'vitest';
import { FakeBrowserHandle, FakeBrowserProvider } from '../../test/support/fake-browser-provider';
import { BrowserPool, CapacityExhaustedError } from './pool';
import type { BrowserHandle, BrowserProvider, LaunchRequest, WarmLauncher } from './types';

/**
 * The fake provider, with warm browsers that launch once `warmLaunchesWaitFor` resolves (at
 * once by default); records what is handed over and discarded.
 */
class WarmFakeProvider extends FakeBrowserProvider implements BrowserProvider {
  readonly handedOver: string[] = [];
  readonly discarded: string[] = [];
  readonly warmLaunched: string[] = [];
  warmLaunchesWaitFor: Promise<void> = Promise.resolve();
  override readonly warm: WarmLauncher = {
    launch: async (profileId): Promise<BrowserHandle> => {
      await this.warmLaunchesWaitFor;
      this.warmLaunched.push(profileId);
      return new FakeBrowserHandle(profileId);
    },
    handOver: async (profileId) => {
      this.handedOver.push(profileId);
    },
    discard: async (profileId) => {
      this.discarded.push(profileId);
    },
  };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

it('counts warm browsers against capacity, hands one to a create, and lists it only once the create launches it', async () => {
  const provider = new WarmFakeProvider();
  const pool = new BrowserPool(provider, { maxBrowsers: 3, warmBrowsers: 2 });
  pool.startWarmBrowsers();
  await settled();
  expect(pool.warmReady).toBe(2);
  expect(pool.size).toBe(2);

  const id = pool.takeWarm('org_a')!;
  expect(provider.warmLaunched).toContain(id);
  await settled();
  expect(provider.handedOver).toEqual([id]);
  // The row is not committed yet: the sweep of strays must not see it.
  expect(pool.runningDeviceIds()).toEqual([]);
  // Refilled a moment later, within the room left: one device and two warm browsers.
  expect(pool.warmReady).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(pool.size).toBe(3);
  expect(pool.warmReady).toBe(2);

  const handle = await pool.launch(id, 'org_a');
  expect(handle.deviceId).toBe(id);
  expect(pool.runningDeviceIds()).toEqual([id]);
  expect(provider.calls.filter((call) => call.method === 'launch')).toEqual([]); // nothing launched for the device
  // Never another organization's.
  await expect(pool.launch(id, 'org_b')).rejects.toThrow(/another organization/);
  await pool.shutdown();
});

it('hands a create a warm browser still launching, handed over once launched, and launches none of the device\'s own', async () => {
  const provider = new WarmFakeProvider();
  let finishLaunch: () => void = () => undefined;
  provider.warmLaunchesWaitFor = new Promise<void>((resolve) => (finishLaunch = resolve));
  const pool = new BrowserPool(provider, { maxBrowsers: 2, warmBrowsers: 1 });
  pool.startWarmBrowsers();
  await settled();
  expect(pool.warmReady).toBe(0);

  const id = pool.takeWarm('org_a')!;
  expect(id).not.toBeNull();
  const handle = pool.launch(id, 'org_a');
  await settled();
  expect(provider.handedOver).toEqual([]); // not before its launch has marked the profile warm
  finishLaunch();
  expect((await handle).deviceId).toBe(id);
  expect(provider.handedOver).toEqual([id]);
  expect(provider.calls.filter((call) => call.method === 'launch')).toEqual([]);
  await pool.shutdown();
});

it('closes a warm browser when a device launch needs its slot, and refills when a slot frees up', async () => {
  const provider = new WarmFakeProvider();
  const pool = new BrowserPool(provider, { maxBrowsers: 2, warmBrowsers: 2 });
  pool.startWarmBrowsers();
  await settled();
  const newestWarm = provider.warmLaunched.at(-1)!;

  await pool.launch('device-1', 'org_a');
  expect(provider.discarded).toEqual([newestWarm]);
  expect(pool.size).toBe(2);
  await pool.launch('device-2', 'org_a');
  expect(pool.warmReady).toBe(0);
  await expect(pool.launch('device-3', 'org_a')).rejects.toBeInstanceOf(CapacityExhaustedError);

  await pool.close('device-1');
  await settled();
  expect(pool.warmReady).toBe(1);
  expect(pool.size).toBe(2);
  await pool.shutdown();
  // Shutdown discards the warm browser no device took (two gave way before).
  expect(provider.discarded).toHaveLength(3);
});

it('keeps no warm browsers when the provider offers none or the setting is 0', async () => {
  const none = new BrowserPool(new FakeBrowserProvider(), { maxBrowsers: 2, warmBrowsers: 2 });
  none.startWarmBrowsers();
  expect(none.takeWarm('org_a')).toBeNull();
  const off = new WarmFakeProvider();
  const zero = new BrowserPool(off, { maxBrowsers: 2, warmBrowsers: 0 });
  zero.startWarmBrowsers();
  await settled();
  expect(off.warmLaunched).toEqual([]);
  expect(zero.size).toBe(0);
});

it("starts no refill while a device's own browser launches, and refills once it has", async () => {
  /** Device launches wait for the test; warm ones are at once. */
  class SlowDeviceLaunches extends WarmFakeProvider {
    readonly pending: Array<() => void> = [];
    override async launch(request: LaunchRequest): Promise<BrowserHandle> {
      await new Promise<void>((resolve) => this.pending.push(resolve));
      return super.launch(request);
    }
  }
  const provider = new SlowDeviceLaunches();
  const pool = new BrowserPool(provider, { maxBrowsers: 4, warmBrowsers: 1 });
  pool.startWarmBrowsers();
  await settled();
  expect(provider.warmLaunched).toHaveLength(1);

  // A burst: one create takes the warm browser, the next finds none and launches its own.
  pool.takeWarm('org_a');
  const launching = pool.launch('device-cold', 'org_a');
  await new Promise((resolve) => setTimeout(resolve, 300)); // past the refill's pause after a take
  expect(provider.warmLaunched).toHaveLength(1);

  provider.pending.splice(0).forEach((resolve) => resolve());
  await launching;
  await settled();
  expect(provider.warmLaunched).toHaveLength(2);
  await pool.shutdown();
});
