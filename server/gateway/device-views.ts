import type { BrowserPool, LiveView } from '../browser';

/**
 * One live view per device, shared by every socket watching it: one screencast per page
 * whatever the number of viewers. Opened on first acquire, closed on the last release.
 */
export class DeviceViews {
  readonly #views = new Map<string, { view: Promise<LiveView>; users: number }>();

  constructor(private readonly pool: BrowserPool) {}

  /** The device's view; throws when the device has no browser in this process. */
  async acquire(deviceId: string): Promise<LiveView> {
    let entry = this.#views.get(deviceId);
    if (entry === undefined) {
      const browser = this.pool.get(deviceId);
      if (browser === undefined) throw new Error('the device has no browser on this host');
      entry = { view: browser.liveView(), users: 0 };
      this.#views.set(deviceId, entry);
    }
    entry.users += 1;
    try {
      return await entry.view;
    } catch (error) {
      this.release(deviceId);
      throw error;
    }
  }

  release(deviceId: string): void {
    const entry = this.#views.get(deviceId);
    if (entry === undefined) return;
    entry.users -= 1;
    if (entry.users > 0) return;
    this.#views.delete(deviceId);
    void entry.view.then((view) => view.close()).catch(() => undefined);
  }
}
