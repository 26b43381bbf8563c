import { randomUUID } from 'node:crypto';
import type { BrowserHandle, WarmLauncher } from './types.js';

export interface WarmBrowsersOptions {
  /** How many to keep launched (OPERATOR_WARM_BROWSERS); 0 keeps none. */
  target: number;
  /** Room left under the host's capacity, asked before each launch. */
  room: () => number;
  /**
   * Devices' own browsers launching now (creates that found no warm browser). A refill
   * waits until there are none, and the pool calls fill() as each ends: on a small host
   * a burst of creates is bound by its launches, and a refill beside them slows each.
   */
  deviceLaunches: () => number;
  /** After a launch failed, the pause before the next one, so a broken Chromium is not relaunched in a loop. */
  retryAfterFailureMs?: number;
  /** The pause between a take and its refill; REFILL_AFTER_TAKE_MS unless set. */
  refillAfterTakeMs?: number;
  /** A warm launch failed (logged by the caller; the pool simply has one fewer). */
  onLaunchFailed?: (error: unknown) => void;
}

interface WarmBrowser {
  id: string;
  handle: Promise<BrowserHandle>;
  /** Set once launched. */
  ready?: BrowserHandle;
}

const RETRY_AFTER_FAILURE_MS = 5_000;
/**
 * How long a refill after a take waits: a Chromium launch takes both cores of a small
 * machine for a few hundred milliseconds, and the create that took the browser still has
 * its transactions to finish (and a burst of creates, their takes) before it answers.
 */
const REFILL_AFTER_TAKE_MS = 250;

/**
 * Browsers launched ahead of device creates, each on a fresh profile whose name is the
 * id of the device that will take it. A warm browser belongs to no organization and no
 * device until take() hands it to exactly one device; it never comes back, so nothing
 * of one device's use can reach another's. The set refills itself whenever it shrinks
 * (a take, a crash, an eviction) within the room the pool gives it, and gives way to
 * devices: evict() closes one when a device needs its slot.
 */
export class WarmBrowsers {
  private readonly browsers = new Map<string, WarmBrowser>();
  private pausedUntil = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private refillTimer: NodeJS.Timeout | null = null;
  private started = false;
  private stopped = false;
  /** Closes and profile removals in progress; shutdown waits for them. */
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    private readonly launcher: WarmLauncher,
    private readonly options: WarmBrowsersOptions,
  ) {}

  /** Warm browsers launched or launching: what they hold of the host's capacity. */
  get size(): number {
    return this.browsers.size;
  }

  /** Warm browsers ready to be taken. */
  get readyCount(): number {
    let ready = 0;
    for (const browser of this.browsers.values()) if (browser.ready !== undefined) ready += 1;
    return ready;
  }

  /** Starts filling, and refilling from then on. */
  start(): void {
    this.started = true;
    this.fill();
  }

  /**
   * A warm browser, no longer warm: its profile id is the id the new device must get. A
   * ready one when there is one, else the one that has been launching longest: what is
   * left of its launch is shorter than a launch of the device's own, which would also
   * race it for the CPU. null when there is none (the caller launches as without a pool).
   * The handle rejects when that launch fails. The caller counts it as its own, then
   * calls fillSoon() to replace it.
   */
  take(): { id: string; handle: Promise<BrowserHandle> } | null {
    const values = [...this.browsers.values()];
    const browser = values.find((candidate) => candidate.ready !== undefined) ?? values[0];
    if (browser === undefined) return null;
    this.browsers.delete(browser.id);
    return { id: browser.id, handle: browser.handle };
  }

  /**
   * Closes one warm browser so a device can have its slot: the newest, usually one
   * still starting. Resolves once its process is gone; null when there is none.
   */
  evict(): Promise<void> | null {
    const newest = [...this.browsers.values()].at(-1);
    if (newest === undefined) return null;
    this.browsers.delete(newest.id);
    return this.retire(newest);
  }

  /** fill(), a moment after a take (REFILL_AFTER_TAKE_MS); several takes meanwhile make one refill. */
  fillSoon(): void {
    if (this.refillTimer !== null) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = null;
      this.fill();
    }, this.options.refillAfterTakeMs ?? REFILL_AFTER_TAKE_MS);
    this.refillTimer.unref();
  }

  /** Launches warm browsers until there are `target`, or no room is left. */
  fill(): void {
    if (!this.started || this.stopped || Date.now() < this.pausedUntil || this.options.deviceLaunches() > 0) return;
    while (this.browsers.size < this.options.target && this.options.room() > 0) this.launchOne();
  }

  /** Closes every warm browser and removes its profile; no refill after. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    if (this.refillTimer !== null) clearTimeout(this.refillTimer);
    const all = [...this.browsers.values()];
    this.browsers.clear();
    await Promise.all(all.map((browser) => this.retire(browser)));
    await Promise.all(this.retiring);
  }

  private launchOne(): void {
    const id = randomUUID();
    const browser: WarmBrowser = { id, handle: this.launcher.launch(id) };
    this.browsers.set(id, browser);
    browser.handle.then(
      (handle) => {
        browser.ready = handle;
        handle.onDisconnected(() => this.lost(browser));
      },
      (error: unknown) => {
        if (this.browsers.get(id) !== browser) return;
        this.browsers.delete(id);
        this.options.onLaunchFailed?.(error);
        this.pause();
      },
    );
  }

  /** A warm browser that crashed is replaced; one taken meanwhile is its device's business. */
  private lost(browser: WarmBrowser): void {
    if (this.browsers.get(browser.id) !== browser) return;
    this.browsers.delete(browser.id);
    void this.retire(browser);
    this.fill();
  }

  private pause(): void {
    const retryMs = this.options.retryAfterFailureMs ?? RETRY_AFTER_FAILURE_MS;
    this.pausedUntil = Date.now() + retryMs;
    if (this.retryTimer !== null) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.pausedUntil = 0; // a timer may fire a little before the clock reaches its due time
      this.fill();
    }, retryMs);
    this.retryTimer.unref();
  }

  /** Its process gone and its profile removed: no device ever sees it. */
  private retire(browser: WarmBrowser): Promise<void> {
    const done = browser.handle
      .then(
        (handle) => handle.discard(),
        () => undefined,
      )
      .then(() => this.launcher.discard(browser.id))
      .catch(() => undefined)
      .finally(() => this.retiring.delete(done));
    this.retiring.add(done);
    return done;
  }
}
