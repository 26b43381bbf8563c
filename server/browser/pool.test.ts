import { expect, it } from 'vitest';
import { FakeBrowserHandle, FakeBrowserProvider } from '../../test/support/fake-browser-provider';
import { BrowserPool, CapacityExhaustedError } from './pool';
import type { BrowserHandle, LaunchRequest } from './types';

/** The fake provider, whose browsers close only when the test lets them. */
class SlowClosingProvider extends FakeBrowserProvider {
  readonly closings: Array<() => void> = [];
  override async launch(request: LaunchRequest): Promise<BrowserHandle> {
    const handle = (await super.launch(request)) as FakeBrowserHandle;
    // A destroy discards the browser; a close keeps its profile: both take their time here.
    handle.close = handle.discard = () => new Promise<void>((resolve) => this.closings.push(resolve));
    return handle;
  }
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

it('frees a destroyed device at once, and a launch at capacity waits for a browser still closing instead of refusing', async () => {
  const provider = new SlowClosingProvider();
  const pool = new BrowserPool(provider, { maxBrowsers: 1 });
  await pool.launch('device-a', 'org-1');

  const destroyed = pool.destroy('device-a');
  // The device no longer runs here the moment destroy() is called.
  expect(pool.get('device-a')).toBeUndefined();
  expect(pool.runningDeviceIds()).toEqual([]);

  let launched: BrowserHandle | null = null;
  const launching = pool.launch('device-b', 'org-1').then((handle) => (launched = handle));
  await settled();
  // Its slot is still taken by the browser closing: the launch waits, nothing is refused.
  expect(launched).toBeNull();
  expect(provider.calls.filter((call) => call.method === 'launch')).toHaveLength(1);

  provider.closings.shift()!();
  await launching;
  await destroyed;
  expect(launched).not.toBeNull();
  expect(pool.get('device-b')).toBe(launched);
  expect(provider.calls.map((call) => call.method)).toContain('destroyProfile');

  // With nothing closing, a full pool still refuses.
  await expect(pool.launch('device-c', 'org-1')).rejects.toBeInstanceOf(CapacityExhaustedError);
});

it("ends a destroyed device's browser only once what it waits for before a destroy is done, its slot free at once", async () => {
  const provider = new SlowClosingProvider();
  const pool = new BrowserPool(provider, { maxBrowsers: 2 });
  let framed!: () => void;
  const waitedFor: string[] = [];
  pool.waitBeforeDestroy(async (deviceId) => {
    waitedFor.push(deviceId);
    await new Promise<void>((resolve) => (framed = resolve));
  });
  await pool.launch('device-a', 'org-1');

  const destroyed = pool.destroy('device-a');
  expect(pool.get('device-a')).toBeUndefined();
  await settled();
  expect(waitedFor).toEqual(['device-a']);
  // Not discarded yet: the browser still runs, and its profile is kept.
  expect(provider.closings).toHaveLength(0);
  expect(provider.calls.map((call) => call.method)).toEqual(['launch']);

  framed();
  await settled();
  expect(provider.closings).toHaveLength(1);
  provider.closings.shift()!();
  await destroyed;
  expect(provider.calls.map((call) => call.method)).toEqual(['launch', 'destroyProfile']);
});

it('waits for a destroy under way before a stop ends', async () => {
  const provider = new SlowClosingProvider();
  const pool = new BrowserPool(provider, { maxBrowsers: 2 });
  await pool.launch('device-a', 'org-1');
  void pool.destroy('device-a');
  let stopped = false;
  const stopping = pool.shutdown().then(() => (stopped = true));
  await settled();
  expect(stopped).toBe(false);
  provider.closings.shift()!();
  await stopping;
  expect(provider.calls.map((call) => call.method)).toEqual(['launch', 'destroyProfile', 'shutdown']);
});

/** A provider with a capacity of its own (as a browserless server has): one browser, counted until it has closed. */
class OneBrowserProvider extends SlowClosingProvider {
  #open = 0;
  override async launch(request: LaunchRequest): Promise<BrowserHandle> {
    if (this.#open >= 1) throw new CapacityExhaustedError(5, 'the remote pool is full');
    this.#open += 1;
    const handle = await super.launch(request);
    const discard = handle.discard.bind(handle);
    handle.discard = () => discard().then(() => void (this.#open -= 1));
    return handle;
  }
}

it("retries a launch the provider refused while this host's own deleted browser still closes there", async () => {
  const provider = new OneBrowserProvider();
  const pool = new BrowserPool(provider, { maxBrowsers: 10 });
  await pool.launch('device-a', 'org-1');
  void pool.destroy('device-a');

  let launched: BrowserHandle | null = null;
  const launching = pool.launch('device-b', 'org-1').then((handle) => (launched = handle));
  await settled();
  expect(launched).toBeNull();

  provider.closings.shift()!();
  await launching;
  expect(pool.get('device-b')).toBe(launched);

  // Refused with nothing of this host's closing: the refusal stands.
  await expect(pool.launch('device-c', 'org-1')).rejects.toBeInstanceOf(CapacityExhaustedError);
});
