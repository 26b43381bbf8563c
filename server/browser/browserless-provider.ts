import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import puppeteer, { type Browser, type BrowserContext } from 'puppeteer-core';
import { PuppeteerBrowserHandle } from './browser-handle.js';
import { deviceContextOptions, deviceEndpoint, httpUrl, isSharedBrowserEndpoint, readRemoteCapacity } from './browserless-endpoint.js';
import { CdpConnectError, openCdpTransport, type CdpTransport } from './cdp-transport.js';
import { captureDeviceState, restoreDeviceState, VisitedOrigins, type DeviceStateStore } from './device-state.js';
import { CapacityExhaustedError, DEFAULT_RETRY_AFTER_SECONDS } from './pool.js';
import { BrowserLaunchError, type BrowserHandle, type BrowserProvider, type EgressGate, type LaunchRequest } from './types.js';

export interface BrowserlessProviderOptions {
  /** WebSocket endpoint, token in the query as browserless expects: ws://host:3000?token=... */
  endpoint: string;
  /** Where devices' cookies and localStorage are kept between launches. */
  deviceStates: DeviceStateStore;
  /**
   * The egress proxy, when the browsers behind the endpoint can reach it (browserless on
   * this machine); null leaves egress to the browserless deployment (docs/api.md).
   */
  egress: EgressGate | null;
  /** Retry-After of the 503 when the remote pool is full. */
  retryAfterSeconds?: number;
}

const PROTOCOL_TIMEOUT_MS = 60_000;
/** A readiness probe, and the capacity check before each launch, must answer quickly whatever the endpoint does. */
const PROBE_TIMEOUT_MS = 1_000;
/**
 * Longest a connection may take to open. browserless opens it once the device's browser
 * has started (about a second on a busy host), and holds it while the connection is
 * queued; a queued device would be a create that hangs, so past this the pool counts as
 * full.
 */
const CONNECT_TIMEOUT_MS = 10_000;
/** Saving the state on close must not hold a sleep or a shutdown for long; past this the previous save stays. */
const STATE_SAVE_TIMEOUT_MS = 10_000;
const VIEWPORT = { width: 1280, height: 800 };

/**
 * Devices on remote browsers reached over CDP, each in a browser context of its own
 * created afresh at every launch, carrying the egress proxy when there is one. On a
 * browserless endpoint every connection gets a dedicated browser, which browserless
 * closes (and whose temporary profile it deletes) when the device disconnects; on a raw
 * DevTools endpoint devices share one browser, and the context isolates them.
 *
 * Nothing of a device stays on the remote side, so what it must keep (cookies,
 * localStorage) is saved through the DeviceStateStore when its browser closes and
 * restored at the next launch, by whichever instance makes it.
 *
 * Capacity comes from the remote pool: before connecting, a browserless endpoint is
 * asked how busy it is (/pressure), and a full pool is CapacityExhaustedError at once. A
 * connection that browserless refuses (429) or holds in its queue past
 * CONNECT_TIMEOUT_MS is the same error: the pool filled up between question and connect.
 */
export class BrowserlessProvider implements BrowserProvider {
  readonly kind = 'browserless' as const;
  /**
   * No warm browsers: a browserless connection is a new browser of the remote pool,
   * started when it connects, so there is nothing this host could launch ahead.
   */
  readonly warm = null;
  private readonly running = new Set<BrowserHandle>();
  private readonly retryAfterSeconds: number;

  constructor(private readonly options: BrowserlessProviderOptions) {
    this.retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
  }

  /** Nothing to check before the first connection: the endpoint's browsers are its own. */
  async start(): Promise<string[]> {
    return [];
  }

  async launch(request: LaunchRequest): Promise<BrowserHandle> {
    const { deviceId } = request;
    const endpoint = deviceEndpoint(this.options.endpoint, this.options.egress);
    if (!isSharedBrowserEndpoint(endpoint)) await this.ensureRemoteCapacity(endpoint);
    const transport = await this.connect(endpoint, deviceId);

    let browser: Browser;
    try {
      browser = await puppeteer.connect({ transport, defaultViewport: VIEWPORT, protocolTimeout: PROTOCOL_TIMEOUT_MS });
    } catch {
      transport.close();
      throw new BrowserLaunchError(`the remote browser of device ${deviceId} did not answer over CDP`, true);
    }

    let context: BrowserContext;
    let origins: VisitedOrigins;
    try {
      context = await browser.createBrowserContext(deviceContextOptions(this.options.egress));
      origins = new VisitedOrigins(await restoreDeviceState(context, await this.options.deviceStates.load(deviceId)));
      origins.watch(context);
    } catch {
      await disconnect(browser, transport);
      throw new BrowserLaunchError(`could not prepare the remote browser for device ${deviceId}`, true);
    }

    const handle: PuppeteerBrowserHandle = new PuppeteerBrowserHandle({
      deviceId,
      pid: null,
      incarnation: randomUUID(),
      location: null,
      browser,
      context,
      egress: this.options.egress,
      release: async () => {
        this.running.delete(handle);
        if (!browser.connected) return;
        // A state that cannot be read or written leaves the previous save in place; the
        // browser closes regardless.
        await Promise.race([this.saveState(deviceId, context, origins).catch(() => undefined), sleep(STATE_SAVE_TIMEOUT_MS, undefined, { ref: false })]);
        await context.close().catch(() => undefined);
        await disconnect(browser, transport);
      },
    });
    browser.once('disconnected', () => {
      if (this.running.delete(handle)) handle.notifyDisconnected();
    });
    this.running.add(handle);
    return handle;
  }

  /** Forgets the device's saved state; the remote side keeps nothing of it (see the class comment). */
  async destroyProfile(deviceId: string): Promise<void> {
    await this.options.deviceStates.remove(deviceId);
  }

  /**
   * Whether the endpoint answers: browserless's /pressure (it checks the token and
   * starts no browser), or a raw DevTools endpoint's /json/version.
   */
  async isReachable(): Promise<boolean> {
    const endpoint = new URL(this.options.endpoint);
    const probe = httpUrl(endpoint, isSharedBrowserEndpoint(endpoint) ? '/json/version' : '/pressure');
    try {
      const response = await fetch(probe, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      await response.body?.cancel();
      return response.ok;
    } catch {
      return false;
    }
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.running].map((handle) => handle.close()));
  }

  private async ensureRemoteCapacity(endpoint: URL): Promise<void> {
    const capacity = await readRemoteCapacity(endpoint, PROBE_TIMEOUT_MS);
    if (capacity !== null && capacity.maxConcurrent !== null && capacity.inUse >= capacity.maxConcurrent) {
      throw new CapacityExhaustedError(this.retryAfterSeconds, `all ${capacity.maxConcurrent} browsers of the browserless pool are in use`);
    }
  }

  private async connect(endpoint: URL, deviceId: string): Promise<CdpTransport> {
    try {
      return await openCdpTransport(endpoint.toString(), CONNECT_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof CdpConnectError && error.reason !== 'failed') {
        throw new CapacityExhaustedError(this.retryAfterSeconds, `the browserless pool has no free browser (${error.reason})`);
      }
      throw new BrowserLaunchError(`could not connect to the browserless endpoint for device ${deviceId}`, true);
    }
  }

  private async saveState(deviceId: string, context: BrowserContext, origins: VisitedOrigins): Promise<void> {
    await this.options.deviceStates.save(deviceId, await captureDeviceState(context, origins));
  }
}

/**
 * Leaves the remote browser and waits until the socket has closed, so browserless has
 * given the device's slot back (and a shared browser has dropped the session) by the
 * time close() returns.
 */
async function disconnect(browser: Browser, transport: CdpTransport): Promise<void> {
  await browser.disconnect().catch(() => undefined);
  await transport.closed;
}
