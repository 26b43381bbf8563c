import type { BrowserHandle, BrowserProvider, LaunchRequest } from './types.js';
import { WarmBrowsers } from './warm-browsers.js';

/**
 * Every browser slot is taken, this host's (the pool's own limit) or the remote pool's
 * (thrown by the browserless provider); callers should retry after `retryAfterSeconds`.
 */
export class CapacityExhaustedError extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    /** Which limit was reached. */
    reason: string,
  ) {
    super(`${reason}; retry in ${retryAfterSeconds} s`);
    this.name = 'CapacityExhaustedError';
  }
}

/** The device's browser is running for another organization; a browser is never shared. */
export class DeviceOrganizationMismatchError extends Error {
  constructor(readonly deviceId: string) {
    super(`device ${deviceId} is running for another organization`);
    this.name = 'DeviceOrganizationMismatchError';
  }
}

export interface BrowserPoolOptions {
  maxBrowsers: number;
  /** Hint carried by CapacityExhaustedError; roughly how long a slot takes to free up. */
  retryAfterSeconds?: number;
  /**
   * Browsers to keep launched ahead of creates (OPERATOR_WARM_BROWSERS), where the
   * provider offers them (local); 0 or absent keeps none. They count against maxBrowsers.
   */
  warmBrowsers?: number;
  /** A warm browser failed to launch; the pool retries a few seconds later. */
  onWarmLaunchFailed?: (error: unknown) => void;
}

interface Slot {
  orgId: string;
  /** Resolves to the handle once launched; rejects (and the slot is dropped) on failure. */
  handle: Promise<BrowserHandle>;
  /** Set once the launch succeeded. */
  ready?: BrowserHandle;
  /**
   * A warm browser taken for a device whose row is not committed yet: not listed as
   * running until the create asks for it with launch(), so the sweep of browsers without
   * a device does not close it meanwhile.
   */
  awaitingDevice?: boolean;
}

/** Retry-After of a full pool when none is configured: roughly how long a slot takes to free up. */
export const DEFAULT_RETRY_AFTER_SECONDS = 30;

/**
 * Running browsers by device id, at most `maxBrowsers` at once, counting browsers still
 * starting or shutting down. One browser (process or context) per device, so no browser
 * ever serves two organizations; concurrent launches of one device share one launch,
 * and a launch waits for the same device's close to finish so two browsers never hold
 * one profile.
 */
export class BrowserPool {
  private readonly slots = new Map<string, Slot>();
  private readonly closing = new Map<string, Promise<void>>();
  /** Destroys under way (a delete answers before they end): shutdown and detach wait for them. */
  private readonly destroying = new Set<Promise<void>>();
  private readonly lostListeners: Array<(deviceId: string) => void> = [];
  private readonly launchedListeners: Array<(deviceId: string, handle: BrowserHandle) => void> = [];
  private readonly handedOffListeners: Array<(deviceId: string) => void> = [];
  private readonly retryAfterSeconds: number;
  private readonly warm: WarmBrowsers | null;
  /** Devices' browsers launching (not warm ones, not handed-over ones): warm refills wait for them. */
  private deviceLaunches = 0;
  /** What destroy() waits for before it ends a device's browser (waitBeforeDestroy). */
  private beforeDestroy: (deviceId: string) => Promise<void> = async () => undefined;

  constructor(
    private readonly provider: BrowserProvider,
    private readonly options: BrowserPoolOptions,
  ) {
    this.retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
    const warmTarget = options.warmBrowsers ?? 0;
    this.warm =
      provider.warm === null || warmTarget === 0
        ? null
        : new WarmBrowsers(provider.warm, {
            target: warmTarget,
            room: () => this.options.maxBrowsers - this.size,
            deviceLaunches: () => this.deviceLaunches,
            onLaunchFailed: options.onWarmLaunchFailed,
          });
  }

  /**
   * Starts keeping the warm browsers launched. Called once the devices this host must
   * bring back after a restart have their browsers: they come first.
   */
  startWarmBrowsers(): void {
    this.warm?.start();
  }

  /** Warm browsers launched and waiting for a create (for /metrics). */
  get warmReady(): number {
    return this.warm?.readyCount ?? 0;
  }

  /**
   * Hands a warm browser (a ready one, else one still launching) to a new device of
   * `orgId`: returns the id the device must be created with (its profile's name), or
   * null when there is none, and the create launches as usual. From here the browser is
   * that device's slot, exactly as if launch() had started it; a replacement starts in
   * the background. The caller launch()es it once the device's row is committed (until
   * then it is not listed among the running devices), or destroy()s it when the create
   * fails.
   */
  takeWarm(orgId: string): string | null {
    const taken = this.warm?.take() ?? null;
    if (taken === null) return null;
    const { id, handle: launching } = taken;
    // Handed over once launched: the warm launch marks its profile before it starts.
    const handedOver = launching.then((handle) =>
      this.provider.warm!.handOver(id).then(
        () => handle,
        async (error: unknown) => {
          await handle.close();
          throw error;
        },
      ),
    );
    const slot: Slot = { orgId, handle: handedOver, awaitingDevice: true };
    this.slots.set(id, slot);
    this.watch(id, slot);
    this.warm!.fillSoon();
    return id;
  }

  get capacity(): number {
    return this.options.maxBrowsers;
  }

  isProviderReachable(): Promise<boolean> {
    return this.provider.isReachable();
  }

  /** Browsers running, starting or closing, warm ones included: what counts against maxBrowsers. */
  get size(): number {
    let closingOthers = 0;
    for (const deviceId of this.closing.keys()) if (!this.slots.has(deviceId)) closingOthers += 1;
    return this.slots.size + closingOthers + (this.warm?.size ?? 0);
  }

  /**
   * The device's running browser, or a newly launched one. Throws
   * CapacityExhaustedError when every slot is taken, DeviceOrganizationMismatchError
   * when the device runs for another organization, and whatever the provider throws
   * (BrowserLaunchError) when the launch fails.
   */
  launch(deviceId: string, orgId: string, options: { adopt?: string } = {}): Promise<BrowserHandle> {
    const existing = this.slots.get(deviceId);
    if (existing) {
      if (existing.orgId !== orgId) return Promise.reject(new DeviceOrganizationMismatchError(deviceId));
      if (existing.awaitingDevice === true) {
        existing.awaitingDevice = false;
        // A warm browser that was ready before its device existed: the device has it now.
        if (existing.ready !== undefined) this.announceLaunched(deviceId, existing.ready);
      }
      return existing.handle;
    }
    // A device whose previous browser is still closing reuses that browser's slot.
    const occupied = this.size - (this.closing.has(deviceId) ? 1 : 0);
    let room = this.closing.get(deviceId) ?? Promise.resolve();
    if (occupied >= this.options.maxBrowsers) {
      // A warm browser gives way: its slot is the device's once its process is gone.
      const evicted = this.warm?.evict() ?? null;
      if (evicted === null) {
        // A browser still closing (a delete answers before its browser is gone) frees its
        // slot in a moment: the launch waits for the first to end, then asks again.
        const closingOthers = this.closingOthers(deviceId);
        if (closingOthers.length > 0) return Promise.race(closingOthers).then(() => this.launch(deviceId, orgId, options));
        return Promise.reject(new CapacityExhaustedError(this.retryAfterSeconds, `all ${this.options.maxBrowsers} browsers of this host are in use`));
      }
      const previousClose = room;
      room = Promise.all([previousClose, evicted]).then(() => undefined);
    }
    this.deviceLaunches += 1;
    const handle = room.then(() => this.launchOnProvider({ deviceId, orgId, ...(options.adopt === undefined ? {} : { adopt: options.adopt }) }));
    void handle
      .catch(() => undefined)
      .finally(() => {
        this.deviceLaunches -= 1;
        this.warm?.fill();
      });
    const slot: Slot = { orgId, handle };
    this.slots.set(deviceId, slot);
    this.watch(deviceId, slot);
    return slot.handle;
  }

  /** Closes under way of browsers other than the device's own (a delete answers before they end). */
  private closingOthers(deviceId: string): Promise<void>[] {
    return [...this.closing].filter(([id]) => id !== deviceId && !this.slots.has(id)).map(([, closed]) => closed.catch(() => undefined));
  }

  /**
   * A provider with a capacity of its own (a browserless server) may refuse a launch while a
   * browser this host is still closing counts there: the launch then waits for those closes
   * and asks once more.
   */
  private async launchOnProvider(request: LaunchRequest): Promise<BrowserHandle> {
    try {
      return await this.provider.launch(request);
    } catch (error) {
      const closingOthers = this.closingOthers(request.deviceId);
      if (!(error instanceof CapacityExhaustedError) || closingOthers.length === 0) throw error;
      await Promise.all(closingOthers);
      return this.provider.launch(request);
    }
  }

  /** Marks the slot ready once its browser runs, and follows its loss; drops it if it never ran. */
  private watch(deviceId: string, slot: Slot): void {
    slot.handle.then(
      (handle) => {
        slot.ready = handle;
        handle.onDisconnected(() => this.onLost(deviceId, slot));
        if (slot.awaitingDevice !== true) this.announceLaunched(deviceId, handle);
      },
      () => {
        if (this.dropSlot(deviceId, slot)) this.warm?.fill();
      },
    );
  }

  /** Devices whose browser has finished starting and still runs here. */
  runningDeviceIds(): string[] {
    return [...this.slots].filter(([, slot]) => slot.ready !== undefined && slot.awaitingDevice !== true).map(([deviceId]) => deviceId);
  }

  /** The device's running browser; undefined when it is not running or still starting. */
  get(deviceId: string): BrowserHandle | undefined {
    return this.slots.get(deviceId)?.ready;
  }

  /** Closes the device's browser, keeping its profile. No-op when it is not running. */
  close(deviceId: string): Promise<void> {
    return this.end(deviceId, (handle) => handle.close());
  }

  /** Ends the device's browser with `how` (close, or discard); its slot is free at once. */
  private async end(deviceId: string, how: (handle: BrowserHandle) => Promise<void>): Promise<void> {
    const slot = this.slots.get(deviceId);
    if (!slot) return this.closing.get(deviceId);
    this.dropSlot(deviceId, slot);
    const closed = slot.handle.then(how, () => undefined);
    const tracked = closed.finally(() => {
      if (this.closing.get(deviceId) === tracked) this.closing.delete(deviceId);
      this.warm?.fill(); // the slot is free again
    });
    this.closing.set(deviceId, tracked);
    return tracked;
  }

  /**
   * Ends the device's browser without saving anything of it (BrowserHandle.discard) and
   * deletes its profile. The slot is free at once (the
   * device no longer runs here), so a caller may leave the rest to run on: a stop of the
   * service waits for it, and what a process dying meanwhile leaves (a kept browser, a
   * profile) the next start removes (reconcileHostDevices).
   */
  destroy(deviceId: string): Promise<void> {
    const destroyed = (async () => {
      await this.end(deviceId, async (handle) => {
        await this.beforeDestroy(deviceId);
        await handle.discard();
      });
      await this.provider.destroyProfile(deviceId);
    })();
    const tracked = destroyed.catch(() => undefined).finally(() => this.destroying.delete(tracked));
    this.destroying.add(tracked);
    return destroyed;
  }

  /**
   * Sets what destroy() waits for, its slot already free, before it ends a device's
   * browser: the recordings of its page getting a first frame (Recorder.untilFramed),
   * bounded by the caller.
   */
  waitBeforeDestroy(wait: (deviceId: string) => Promise<void>): void {
    this.beforeDestroy = wait;
  }

  /** The devices a profile (a directory, a saved state) is kept for, running or not. */
  profileIds(): Promise<string[]> {
    return this.provider.profileIds();
  }

  /**
   * Called with the device id and its browser each time a device's browser starts running
   * here (launched, re-attached or handed over from the warm browsers).
   */
  onDeviceLaunched(listener: (deviceId: string, handle: BrowserHandle) => void): void {
    this.launchedListeners.push(listener);
  }

  private announceLaunched(deviceId: string, handle: BrowserHandle): void {
    for (const listener of this.launchedListeners) listener(deviceId, handle);
  }

  /** Called with the device id when a browser dies without close() being called. */
  onDeviceLost(listener: (deviceId: string) => void): void {
    this.lostListeners.push(listener);
  }

  /** Closes every browser for good: a stop that brings nothing back (Ctrl-C, a retired host). */
  async shutdown(): Promise<void> {
    await this.warm?.shutdown();
    await Promise.all([...this.slots.keys()].map((deviceId) => this.close(deviceId)));
    await Promise.all([...this.closing.values(), ...this.destroying]);
    await this.provider.shutdown();
  }

  /**
   * The hand-over to the next service on this data directory: every device's browser
   * keeps running under its keeper, and the next start re-attaches to it. Warm browsers
   * belong to no device and are closed.
   */
  async detach(): Promise<void> {
    await this.warm?.shutdown();
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(slots.map((slot) => slot.handle.then((handle) => handle.detach(), () => undefined)));
    await Promise.all([...this.closing.values(), ...this.destroying]);
    await this.provider.detach();
  }

  /** Devices whose browser a keeper of this data directory keeps and no slot holds (start-up). */
  async keptDeviceIds(): Promise<string[]> {
    return (await this.provider.keptDeviceIds()).filter((deviceId) => !this.slots.has(deviceId));
  }

  /**
   * The device now runs on another host (it adopted the device while this one looked
   * dead): this host lets go of the browser without closing what the other host joined
   * (a browserless browser stays up while any client is connected; a local one, which
   * no other host can join, closes). Listeners hear of it first, so the sockets watching
   * the device here are told to reconnect.
   */
  async handOff(deviceId: string): Promise<void> {
    const slot = this.slots.get(deviceId);
    if (slot === undefined) return;
    this.dropSlot(deviceId, slot);
    for (const listener of this.handedOffListeners) listener(deviceId);
    await slot.handle.then((handle) => handle.detach(), () => undefined);
    await this.provider.closeKept(deviceId);
    this.warm?.fill();
  }

  /** Called with the device id when handOff() let go of its browser. */
  onDeviceHandedOff(listener: (deviceId: string) => void): void {
    this.handedOffListeners.push(listener);
  }

  /** Closes a kept browser whose device is no longer this host's. */
  closeKept(deviceId: string): Promise<void> {
    return this.provider.closeKept(deviceId);
  }

  private onLost(deviceId: string, slot: Slot): void {
    if (!this.dropSlot(deviceId, slot)) return;
    for (const listener of this.lostListeners) listener(deviceId);
    this.warm?.fill();
  }

  /** Removes the slot if it is still the device's current one. */
  private dropSlot(deviceId: string, slot: Slot): boolean {
    if (this.slots.get(deviceId) !== slot) return false;
    this.slots.delete(deviceId);
    return true;
  }
}
