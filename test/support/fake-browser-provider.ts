import { randomUUID } from 'node:crypto';
import { FakePageDriver } from './fake-page-driver';
import type { BrowserHandle, BrowserProvider, CdpChannel, LaunchRequest, LiveView, PageDriver, ScreencastAudience, WarmLauncher } from '../../server/browser';

export type ProviderMethod = Exclude<keyof BrowserProvider, 'kind' | 'warm'>;

export interface ProviderCall {
  method: ProviderMethod;
  args: unknown[];
}

/**
 * A recording BrowserProvider for unit tests of the code above the browser layer (the
 * pool, the device transitions); integration tests start real Chromium instead. No
 * browser is started: a launch answers with a FakeBrowserHandle, or fails once a test
 * has said so. Every call is recorded in order.
 */
export class FakeBrowserProvider implements BrowserProvider {
  readonly kind = 'local';
  /** Warm browsers are the local provider's; their tests use real Chromium. */
  readonly warm: WarmLauncher | null = null;
  readonly calls: ProviderCall[] = [];
  /** What isReachable() answers. */
  reachable = true;
  #launchFailure: Error | null = null;

  /** Every later launch throws `error`, like a provider whose browser will not start. */
  failLaunches(error: Error): void {
    this.#launchFailure = error;
  }

  /** Nothing to prepare: no warnings. */
  async start(): Promise<string[]> {
    this.calls.push({ method: 'start', args: [] });
    return [];
  }

  async launch(request: LaunchRequest): Promise<BrowserHandle> {
    this.calls.push({ method: 'launch', args: [request] });
    if (this.#launchFailure !== null) throw this.#launchFailure;
    return new FakeBrowserHandle(request.deviceId);
  }

  async destroyProfile(deviceId: string): Promise<void> {
    this.calls.push({ method: 'destroyProfile', args: [deviceId] });
  }

  /** A fake keeps no profiles. */
  async profileIds(): Promise<string[]> {
    this.calls.push({ method: 'profileIds', args: [] });
    return [];
  }

  async shutdown(): Promise<void> {
    this.calls.push({ method: 'shutdown', args: [] });
  }

  async detach(): Promise<void> {
    this.calls.push({ method: 'detach', args: [] });
  }

  /** A fake keeps nothing across a restart. */
  async keptDeviceIds(): Promise<string[]> {
    this.calls.push({ method: 'keptDeviceIds', args: [] });
    return [];
  }

  async closeKept(deviceId: string): Promise<void> {
    this.calls.push({ method: 'closeKept', args: [deviceId] });
  }

  async isReachable(): Promise<boolean> {
    this.calls.push({ method: 'isReachable', args: [] });
    return this.reachable;
  }
}

/** A launched fake browser: its page is a FakePageDriver; it never goes away on its own. */
export class FakeBrowserHandle implements BrowserHandle {
  readonly pid = null;
  readonly incarnation = randomUUID();
  readonly reattached = false;
  readonly location = null;
  readonly driver = new FakePageDriver();

  constructor(readonly deviceId: string) {}

  async page(): Promise<PageDriver> {
    return this.driver;
  }

  /** A fake browser has no screen to show; tests of live views fake the view itself. */
  async liveView(_audience: ScreencastAudience): Promise<LiveView> {
    throw new Error('a fake browser has no live view');
  }

  async followingLiveView(): Promise<LiveView> {
    throw new Error('a fake browser has no live view');
  }

  /** Nor a DevTools endpoint; CDP access is tested on real Chromium. */
  async openCdpChannel(): Promise<CdpChannel> {
    throw new Error('a fake browser has no DevTools channel');
  }

  async isExtensionWorkerHandshake(): Promise<boolean> {
    return false;
  }

  onDisconnected(): void {}

  async close(): Promise<void> {}

  async discard(): Promise<void> {}

  async detach(): Promise<void> {}
}
