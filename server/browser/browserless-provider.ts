import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import puppeteer, { type Browser, type BrowserContext } from 'puppeteer-core';
import { PuppeteerBrowserHandle } from './browser-handle.js';
import { giveEgressCredential } from './egress-credential.js';
import { deviceContextOptions, deviceEndpoint, httpUrl, isSharedBrowserEndpoint, readRemoteCapacity } from './browserless-endpoint.js';
import { captureDeviceState, restoreDeviceState, VisitedOrigins, type DeviceStateStore } from './device-state.js';
import { KeeperConnection, liveKeepers } from './keeper-connection.js';
import { keeperSocket, prepareKeepersDirectory, removeKeeperSocket } from './keeper-directory.js';
import { KeeperStartError, startKeeper } from './keeper-launch.js';
import { parseRemoteLocation, remoteLocation, type RemoteLocation } from './remote-location.js';
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
  /** The host's data directory: its browser keepers listen in <dataDir>/keepers/. */
  dataDir: string;
  /** With no service connected, how long a keeper waits for one before it leaves its browser (OPERATOR_BROWSER_KEEP_SECS). */
  keepSecs: number;
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
/**
 * How long a close waits for browserless to count the browser out of its pool: it closes a
 * browser a moment after its last client left, and a launch meanwhile would find the pool
 * full.
 */
const REMOTE_CLOSE_TIMEOUT_MS = 5_000;
const REMOTE_CLOSE_POLL_MS = 50;
/** The keeper's own start (Node loading it) on top of its connection's handshake. */
const KEEPER_START_MARGIN_MS = 10_000;
const VIEWPORT = { width: 1280, height: 800 };

/**
 * Devices on remote browsers reached over CDP, each in a browser context of its own
 * created afresh at every new browser, carrying the egress proxy when there is one. On a
 * browserless endpoint every connection gets a dedicated browser, which browserless
 * closes (and whose temporary profile it deletes) when its last client disconnects; on a
 * raw DevTools endpoint devices share one browser, and the context isolates them.
 *
 * The WebSocket is held by a browser keeper (keeper/keeper-process.ts), not by the
 * service, so the browser outlives a service restart: the next start re-attaches through
 * the keeper's socket. Another host can join the same browser (adopt: browserless accepts
 * a second client on /devtools/browser/<id> while one is connected) with the handle's
 * `location` (remote-location.ts). browserless 2.42's open-source server has no
 * `Browserless.reconnect` CDP command (nor any Browserless.* command): a browser whose
 * last client left is gone, so a keeper is what keeps one.
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
  private keepers: Promise<string> | null = null;

  constructor(private readonly options: BrowserlessProviderOptions) {
    this.retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
  }

  /** Nothing to check before the first connection: the endpoint's browsers are its own. */
  async start(): Promise<string[]> {
    return [];
  }

  async launch(request: LaunchRequest): Promise<BrowserHandle> {
    const { deviceId } = request;
    const keepers = await this.keepersDir();
    const socketPath = keeperSocket(keepers, deviceId);
    const kept = await KeeperConnection.open(socketPath, deviceId);
    if (kept !== null) {
      try {
        // A context behind a proxy that no longer listens (the egress port changed) reaches nothing.
        if (kept.identity.egressUrl !== (this.options.egress?.url ?? null)) throw new BrowserLaunchError('egress moved', true);
        return await this.rejoin(kept, deviceId);
      } catch {
        // A new browser it is.
        await kept.closeBrowser();
      }
    }
    await removeKeeperSocket(keepers, deviceId);
    if (request.adopt !== undefined) {
      const location = parseRemoteLocation(request.adopt);
      if (location === null) throw new BrowserLaunchError(`the location to adopt device ${deviceId} from is not one this provider wrote`, false);
      await this.startKeeperFor(deviceId, socketPath, joinEndpoint(this.options.endpoint, location.browserId), location);
      const adopted = await KeeperConnection.open(socketPath, deviceId);
      if (adopted === null) throw new BrowserLaunchError(`the keeper of device ${deviceId} did not answer`, true);
      try {
        return await this.rejoin(adopted, deviceId);
      } catch {
        await adopted.releaseBrowser();
        throw new BrowserLaunchError(`the remote browser of device ${deviceId} no longer holds its context`, true);
      }
    }
    return this.launchNew(deviceId, socketPath);
  }

  private async launchNew(deviceId: string, socketPath: string): Promise<BrowserHandle> {
    const endpoint = deviceEndpoint(this.options.endpoint, this.options.egress);
    const shared = isSharedBrowserEndpoint(endpoint);
    if (!shared) await this.ensureRemoteCapacity(endpoint);
    // Names the connection among browserless's sessions, so its browser's id can be found.
    const trackingId = shared ? null : `device-${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    if (trackingId !== null) endpoint.searchParams.set('trackingId', trackingId);
    await this.startKeeperFor(deviceId, socketPath, endpoint.toString(), null);
    const connection = await KeeperConnection.open(socketPath, deviceId);
    if (connection === null) throw new BrowserLaunchError(`the keeper of device ${deviceId} did not answer`, true);

    let browser: Browser;
    try {
      browser = await puppeteer.connect({ transport: connection, defaultViewport: VIEWPORT, protocolTimeout: PROTOCOL_TIMEOUT_MS });
    } catch {
      await connection.closeBrowser();
      throw new BrowserLaunchError(`the remote browser of device ${deviceId} did not answer over CDP`, true);
    }

    let context: BrowserContext;
    let origins: VisitedOrigins;
    let location: string | null;
    try {
      context = await browser.createBrowserContext(deviceContextOptions(this.options.egress));
      origins = new VisitedOrigins(await restoreDeviceState(context, await this.options.deviceStates.load(deviceId)));
      origins.watch(context);
      // The device's page exists from the start: browserless lists a browser's id only with its pages.
      const page = (await context.pages())[0] ?? (await context.newPage());
      const credentials = this.options.egress?.credentialsFor(deviceId) ?? null;
      if (credentials !== null) await giveEgressCredential(page, credentials);
      const browserId = trackingId === null ? null : await findRemoteBrowserId(endpoint, trackingId);
      connection.remember(browserId, context.id ?? null);
      location = browserId === null || context.id === undefined ? null : remoteLocation({ browserId, contextId: context.id, incarnation: connection.identity.incarnation });
    } catch {
      await connection.closeBrowser();
      throw new BrowserLaunchError(`could not prepare the remote browser for device ${deviceId}`, true);
    }
    return this.handleOf(deviceId, browser, connection, context, origins, location, false);
  }

  /** puppeteer over a keeper whose browser already holds the device's context (kept, or adopted). */
  private async rejoin(connection: KeeperConnection, deviceId: string): Promise<BrowserHandle> {
    const { contextId, remoteBrowserId, incarnation } = connection.identity;
    const browser = await puppeteer.connect({ transport: connection, defaultViewport: VIEWPORT, protocolTimeout: PROTOCOL_TIMEOUT_MS });
    const context = browser.browserContexts().find((candidate) => candidate.id !== undefined && candidate.id === contextId);
    if (context === undefined) {
      await browser.disconnect().catch(() => undefined);
      throw new BrowserLaunchError(`the remote browser of device ${deviceId} no longer holds its context`, true);
    }
    // The origins visited before this service joined are those its pages show now.
    const origins = new VisitedOrigins();
    for (const page of await context.pages()) origins.note(page.url());
    origins.watch(context);
    const location = remoteBrowserId === null || contextId === null ? null : remoteLocation({ browserId: remoteBrowserId, contextId, incarnation });
    return this.handleOf(deviceId, browser, connection, context, origins, location, true);
  }

  private handleOf(
    deviceId: string,
    browser: Browser,
    connection: KeeperConnection,
    context: BrowserContext,
    origins: VisitedOrigins,
    location: string | null,
    reattached: boolean,
  ): BrowserHandle {
    const handle: PuppeteerBrowserHandle = new PuppeteerBrowserHandle({
      deviceId,
      pid: null,
      incarnation: connection.identity.incarnation,
      reattached,
      location,
      browser,
      context,
      egress: this.options.egress,
      release: async (profile) => {
        this.running.delete(handle);
        if (!browser.connected) return;
        // A state that cannot be read or written leaves the previous save in place; the
        // browser closes regardless. A device whose profile is deleted next saves none.
        if (profile === 'kept') {
          await Promise.race([this.saveState(deviceId, context, origins).catch(() => undefined), sleep(STATE_SAVE_TIMEOUT_MS, undefined, { ref: false })]);
        }
        await context.close().catch(() => undefined);
        // The keeper leaves the browser (browserless closes it with its last client) and
        // exits, which ends puppeteer's connection too.
        await connection.closeBrowser();
        // Closed once the remote pool has room again: a delete followed by a create finds it.
        const remoteBrowserId = location === null ? null : (parseRemoteLocation(location)?.browserId ?? null);
        if (remoteBrowserId !== null) await untilRemoteBrowserGone(new URL(this.options.endpoint), remoteBrowserId);
      },
      detach: async () => {
        this.running.delete(handle);
        await browser.disconnect().catch(() => undefined);
        await connection.closed;
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

  profileIds(): Promise<string[]> {
    return this.options.deviceStates.deviceIds();
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

  async detach(): Promise<void> {
    await Promise.all([...this.running].map((handle) => handle.detach()));
  }

  async keptDeviceIds(): Promise<string[]> {
    const attached = new Set([...this.running].map((handle) => handle.deviceId));
    return [...(await liveKeepers(await this.keepersDir())).keys()].filter((deviceId) => !attached.has(deviceId));
  }

  /** Its state is not saved: the device is no longer this host's, and whoever has it now keeps its own. */
  async closeKept(deviceId: string): Promise<void> {
    const connection = await KeeperConnection.open(keeperSocket(await this.keepersDir(), deviceId), deviceId);
    await connection?.releaseBrowser();
  }

  private keepersDir(): Promise<string> {
    this.keepers ??= prepareKeepersDirectory(this.options.dataDir);
    return this.keepers;
  }

  /** A keeper holding the WebSocket to `endpoint`; a full or queueing pool is CapacityExhaustedError. */
  private async startKeeperFor(deviceId: string, socketPath: string, endpoint: string, joining: RemoteLocation | null): Promise<void> {
    try {
      await startKeeper(
        {
          kind: 'remote',
          deviceId,
          socketPath,
          keepSecs: this.options.keepSecs,
          incarnation: joining?.incarnation ?? null,
          egressUrl: this.options.egress?.url ?? null,
          endpoint,
          connectTimeoutMs: CONNECT_TIMEOUT_MS,
          remoteBrowserId: joining?.browserId ?? null,
          contextId: joining?.contextId ?? null,
        },
        null,
        CONNECT_TIMEOUT_MS + KEEPER_START_MARGIN_MS,
      );
    } catch (error) {
      if (error instanceof KeeperStartError && error.reason !== 'failed') {
        throw new CapacityExhaustedError(this.retryAfterSeconds, `the browserless pool has no free browser (${error.reason})`);
      }
      throw new BrowserLaunchError(`could not connect to the browserless endpoint for device ${deviceId}`, true);
    }
  }

  private async ensureRemoteCapacity(endpoint: URL): Promise<void> {
    const capacity = await readRemoteCapacity(endpoint, PROBE_TIMEOUT_MS);
    if (capacity !== null && capacity.maxConcurrent !== null && capacity.inUse >= capacity.maxConcurrent) {
      throw new CapacityExhaustedError(this.retryAfterSeconds, `all ${capacity.maxConcurrent} browsers of the browserless pool are in use`);
    }
  }

  private async saveState(deviceId: string, context: BrowserContext, origins: VisitedOrigins): Promise<void> {
    await this.options.deviceStates.save(deviceId, await captureDeviceState(context, origins));
  }
}

/** The endpoint that joins the running browser `browserId` (browserless's reconnection path), with the same token. */
function joinEndpoint(endpoint: string, browserId: string): string {
  const url = new URL(endpoint);
  const token = url.searchParams.get('token');
  url.pathname = `/devtools/browser/${encodeURIComponent(browserId)}`;
  url.search = '';
  if (token !== null) url.searchParams.set('token', token);
  return url.toString();
}

/**
 * The id in the /devtools/browser/<id> path of the browser browserless started for the
 * connection named `trackingId`, from its /sessions list (which shows it with the
 * browser's pages); null when it cannot be told. Not CDP's browser target id: Chromium
 * gives the two different ids.
 */
async function findRemoteBrowserId(endpoint: URL, trackingId: string): Promise<string | null> {
  return (await remoteBrowserIds(endpoint, trackingId))?.[0] ?? null;
}

/** Resolves once browserless no longer lists the browser `browserId`, REMOTE_CLOSE_TIMEOUT_MS at most. */
async function untilRemoteBrowserGone(endpoint: URL, browserId: string): Promise<void> {
  const deadline = Date.now() + REMOTE_CLOSE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const listed = await remoteBrowserIds(endpoint, null);
    if (listed === null || !listed.includes(browserId)) return;
    await sleep(REMOTE_CLOSE_POLL_MS, undefined, { ref: false });
  }
}

/**
 * The /devtools/browser/<id> ids of the browsers browserless's /sessions lists (those of
 * the connection named `trackingId` only, when given); null when it cannot be told.
 */
async function remoteBrowserIds(endpoint: URL, trackingId: string | null): Promise<string[] | null> {
  const url = new URL(httpUrl(endpoint, '/sessions'));
  if (trackingId !== null) url.searchParams.set('trackingId', trackingId);
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS * 5) });
    if (!response.ok) return null;
    const sessions = (await response.json()) as Array<{ browserWSEndpoint?: unknown }>;
    const ids: string[] = [];
    for (const session of sessions) {
      if (typeof session.browserWSEndpoint !== 'string') continue;
      const id = new URL(session.browserWSEndpoint).pathname.split('/').filter(Boolean).pop();
      if (id !== undefined) ids.push(id);
    }
    return ids;
  } catch {
    return null;
  }
}
