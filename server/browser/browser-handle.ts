import type { Browser, BrowserContext } from 'puppeteer-core';
import { CdpBridge } from './cdp-bridge.js';
import { openFollowingLiveView } from './following-live-view.js';
import { PuppeteerPageDriver } from './page-driver.js';
import { StagehandExtension } from './stagehand-extension.js';
import {
  ActionError,
  type BrowserHandle,
  type CdpChannel,
  type CdpChannelEnd,
  type CdpChannelRole,
  type EgressGate,
  type LiveView,
  type ScreencastAudience,
  type PageDriver,
} from './types.js';

/**
 * How long a run's page may take to answer a trivial evaluation before it counts as hung
 * and is replaced: far beyond any page that merely works hard, and within the first of a
 * run's protocol timeouts (60 s) it would otherwise wait out.
 */
const UNRESPONSIVE_PAGE_MS = 10_000;

export interface PuppeteerBrowserHandleOptions {
  deviceId: string;
  pid: number | null;
  incarnation: string;
  reattached: boolean;
  location: string | null;
  browser: Browser;
  /** The context the device's page lives in: the default one or the device's own. */
  context: BrowserContext;
  /**
   * Provider-specific teardown (stop the process, or leave a remote browser); `profile`
   * says whether the profile is kept for a later launch or deleted next (BrowserHandle.discard).
   */
  release: (profile: 'kept' | 'deleted') => Promise<void>;
  /** Provider-specific hand-over: disconnect from the keeper, leaving the browser running. */
  detach: () => Promise<void>;
  /** The egress proxy the browser goes through; null where none is in front of it. */
  egress: EgressGate | null;
  /** Where the browser may save downloads (in its profile); null for a remote browser. */
  downloadsDir?: string | null;
  /**
   * The Stagehand extension as npm installed it and where the service keeps its copies, for
   * a browser that is the device (local provider) and may load one; null where it cannot
   * be (a shared browser) or the package is not installed.
   */
  stagehand?: { source: string; copiesRoot: string } | null;
}

/**
 * A device's browser behind puppeteer, shared by both providers. The provider calls
 * notifyDisconnected() when the connection drops; listeners hear about it only when
 * close() did not cause it.
 */
export class PuppeteerBrowserHandle implements BrowserHandle {
  readonly deviceId: string;
  readonly pid: number | null;
  readonly incarnation: string;
  readonly reattached: boolean;
  readonly location: string | null;
  private readonly browser: Browser;
  private readonly context: BrowserContext;
  private readonly release: (profile: 'kept' | 'deleted') => Promise<void>;
  private readonly leave: () => Promise<void>;
  private readonly egress: EgressGate | null;
  private readonly downloadsDir: string | null;
  private readonly stagehand: StagehandExtension | null;
  private driver: Promise<PuppeteerPageDriver> | null = null;
  private readonly disconnectListeners: Array<() => void> = [];
  private closing: Promise<void> | null = null;
  private disconnected = false;
  /** The browser's first tab was offered to a CDP client (CdpBridge's BlankTabClaim): never again. */
  private blankTabClaimed = false;

  constructor(options: PuppeteerBrowserHandleOptions) {
    this.deviceId = options.deviceId;
    this.pid = options.pid;
    this.incarnation = options.incarnation;
    this.reattached = options.reattached;
    this.location = options.location;
    this.browser = options.browser;
    this.context = options.context;
    this.release = options.release;
    this.leave = options.detach;
    this.egress = options.egress;
    this.downloadsDir = options.downloadsDir ?? null;
    const stagehand = options.stagehand ?? null;
    this.stagehand = stagehand === null ? null : new StagehandExtension(options.browser, stagehand.source, stagehand.copiesRoot);
  }

  /** The page a run drives: the current one, or a new one in place of a page that is gone, crashed or hangs. */
  page(): Promise<PageDriver> {
    return this.sharedDriver({ checkResponsive: true });
  }

  async liveView(audience: ScreencastAudience): Promise<LiveView> {
    // Never judged here: a viewer arriving while a run's page is busy must not replace it.
    const driver = await this.sharedDriver({ checkResponsive: false });
    return driver.openLiveView(audience);
  }

  followingLiveView(): Promise<LiveView> {
    return openFollowingLiveView(this.context);
  }

  openCdpChannel(deliver: (message: string) => void, onEnd: (reason: CdpChannelEnd) => void, role: CdpChannelRole = 'client'): Promise<CdpChannel> {
    // The default context has no id: the device is then the whole browser.
    const extension = { extension: this.stagehand, role: role === 'client' ? ('owner' as const) : ('worker' as const) };
    // The agent's page is that tab once it drove it; a worker's connection is no client's.
    const claimBlankTab = () => {
      if (this.blankTabClaimed || this.driver !== null || role !== 'client') return false;
      this.blankTabClaimed = true;
      return true;
    };
    return CdpBridge.open(this.browser, { contextId: this.context.id ?? null }, extension, claimBlankTab, deliver, onEnd);
  }

  async isExtensionWorkerHandshake(key: string | undefined): Promise<boolean> {
    return (await this.stagehand?.takeHandshakeKey(key)) ?? false;
  }

  onDisconnected(listener: () => void): void {
    this.disconnectListeners.push(listener);
  }

  close(): Promise<void> {
    this.closing ??= this.release('kept');
    return this.closing;
  }

  discard(): Promise<void> {
    this.closing ??= this.release('deleted');
    return this.closing;
  }

  /** Like close() for the listeners (the disconnect it causes is no loss), but the browser stays. */
  detach(): Promise<void> {
    this.closing ??= this.leave();
    return this.closing;
  }

  notifyDisconnected(): void {
    if (this.closing !== null || this.disconnected) return;
    this.disconnected = true;
    for (const listener of this.disconnectListeners) listener();
  }

  /**
   * The one driver behind page() and liveView(), so a viewer sees the page the agent
   * drives. Chained on the previous call, so concurrent callers never open two pages.
   */
  private sharedDriver(options: { checkResponsive: boolean }): Promise<PuppeteerPageDriver> {
    this.driver = this.currentOrNewDriver(this.driver, options);
    return this.driver;
  }

  /**
   * The current driver, or a new one when there is none, the site closed its page
   * (window.close()), or its renderer crashed or, asked by a run, answers nothing for
   * UNRESPONSIVE_PAGE_MS (a script that never yields): such a page is closed first, and
   * the run gets a new one rather than waiting out the protocol timeout on each command.
   * A replacement page inherits the allow-list.
   */
  private async currentOrNewDriver(previous: Promise<PuppeteerPageDriver> | null, options: { checkResponsive: boolean }): Promise<PuppeteerPageDriver> {
    const current = previous ? await previous.catch(() => null) : null;
    if (current === null || current.isClosed) return this.openDriver(current, 'any');
    if (current.hasCrashed || (options.checkResponsive && !(await current.responds(UNRESPONSIVE_PAGE_MS)))) {
      await current.closePage();
      return this.openDriver(current, 'new');
    }
    return current;
  }

  /**
   * A driver on a page of the context (`any`: the first open one, or a new one) or on a
   * new page (`new`: the one it replaces may not have closed), with the allow-list of the
   * driver it replaces.
   */
  private async openDriver(replacing: PuppeteerPageDriver | null, which: 'any' | 'new'): Promise<PuppeteerPageDriver> {
    const driver = await this.newDriver(which);
    if (replacing?.allowedDomains) await driver.setAllowedDomains(replacing.allowedDomains);
    return driver;
  }

  private async newDriver(which: 'any' | 'new'): Promise<PuppeteerPageDriver> {
    try {
      const pages = which === 'any' ? await this.context.pages() : [];
      const page = pages.find((candidate) => !candidate.isClosed()) ?? (await this.context.newPage());
      return await PuppeteerPageDriver.create(page, () => this.browser.connected && this.closing === null, this.egress, this.downloadsDir);
    } catch {
      // A browser that cannot hand out a page is unusable whatever the reason.
      throw new ActionError('browser_gone', 'the browser could not open a page');
    }
  }
}
