import { rm } from 'node:fs/promises';
import path from 'node:path';
import puppeteer, { type Browser, type BrowserContext } from 'puppeteer-core';
import { PuppeteerBrowserHandle } from './browser-handle.js';
import { COOKIE_FILE_NAME, restoreCookies, saveCookies } from './cookie-store.js';
import { profileDirectory } from './profile-directory.js';
import { BrowserLaunchError, type BrowserHandle, type BrowserProvider, type LaunchRequest } from './types.js';

export interface BrowserlessProviderOptions {
  /** WebSocket endpoint, token in the query as browserless expects: ws://host:3000?token=... */
  endpoint: string;
  /** Local state (saved cookies) lives in <dataDir>/profiles/<deviceId>. */
  dataDir: string;
}

/** Where browserless keeps per-device profiles on its own disk. */
const REMOTE_PROFILE_ROOT = '/tmp/profiles';
const PROTOCOL_TIMEOUT_MS = 60_000;
const VIEWPORT = { width: 1280, height: 800 };

/**
 * Devices on a remote browser reached over CDP. Two kinds of endpoint behave
 * differently, and both are handled:
 *
 * - A browserless endpoint (ws://host:3000/?token=..., /chromium, /chrome ...) starts a
 *   dedicated browser per connection. The `--user-data-dir` query parameter makes that
 *   browser run on the device's own remote profile, so the device uses the default
 *   context and keeps cookies, localStorage and cache across connections (where the
 *   browserless plan supports user data directories).
 * - A raw DevTools endpoint (ws://host:port/devtools/browser/<id>) names one existing
 *   browser that every device shares. Each device then gets its own incognito
 *   BrowserContext, which isolates devices (and organizations) from each other but
 *   forgets everything when closed.
 *
 * In both cases the device's cookies are also saved to
 * <dataDir>/profiles/<deviceId>/cookies.json on close and restored on launch. That is
 * what makes cookies survive close()+launch() on a shared browser, and it keeps them on
 * browserless deployments whose user data directories do not persist. close() never
 * closes the remote browser itself: it closes the device's own context (shared
 * browser) and disconnects (which ends only the device's dedicated browserless session).
 */
export class BrowserlessProvider implements BrowserProvider {
  readonly kind = 'browserless' as const;
  private readonly running = new Set<BrowserHandle>();

  constructor(private readonly options: BrowserlessProviderOptions) {}

  /** Nothing to check before the first connection: the endpoint's browsers are its own. */
  async start(): Promise<string[]> {
    return [];
  }

  async launch(request: LaunchRequest): Promise<BrowserHandle> {
    const cookieFile = path.join(profileDirectory(this.options.dataDir, request.deviceId), COOKIE_FILE_NAME);
    const endpoint = deviceEndpoint(this.options.endpoint, request.deviceId);
    const shared = isSharedBrowserEndpoint(endpoint);

    let browser: Browser;
    try {
      browser = await puppeteer.connect({
        browserWSEndpoint: endpoint.toString(),
        defaultViewport: VIEWPORT,
        protocolTimeout: PROTOCOL_TIMEOUT_MS,
      });
    } catch {
      throw new BrowserLaunchError(`could not connect to the browserless endpoint for device ${request.deviceId}`, true);
    }

    let context: BrowserContext;
    try {
      context = shared ? await browser.createBrowserContext() : browser.defaultBrowserContext();
      await restoreCookies(context, cookieFile);
    } catch {
      await browser.disconnect().catch(() => undefined);
      throw new BrowserLaunchError(`could not prepare the remote browser for device ${request.deviceId}`, true);
    }

    const handle: PuppeteerBrowserHandle = new PuppeteerBrowserHandle({
      deviceId: request.deviceId,
      pid: null,
      browser,
      context,
      release: async () => {
        this.running.delete(handle);
        if (browser.connected) {
          await saveCookies(context, cookieFile).catch(() => undefined);
          if (shared) await context.close().catch(() => undefined);
          await browser.disconnect().catch(() => undefined);
        }
      },
    });
    browser.once('disconnected', () => {
      if (this.running.delete(handle)) handle.notifyDisconnected();
    });
    this.running.add(handle);
    return handle;
  }

  /**
   * Removes the device's local state. A profile directory on the browserless host has
   * no deletion API and is left to browserless's own housekeeping.
   */
  async destroyProfile(deviceId: string): Promise<void> {
    await rm(profileDirectory(this.options.dataDir, deviceId), { recursive: true, force: true });
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.running].map((handle) => handle.close()));
  }
}

/** The configured endpoint plus `--user-data-dir=<remote root>/<deviceId>`. */
export function deviceEndpoint(endpoint: string, deviceId: string): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new BrowserLaunchError('the browserless endpoint is not a valid URL (check BROWSERLESS_URL)', false);
  }
  url.searchParams.set('--user-data-dir', `${REMOTE_PROFILE_ROOT}/${deviceId}`);
  return url;
}

/** A DevTools browser URL names one running browser, shared by whoever connects. */
export function isSharedBrowserEndpoint(endpoint: URL): boolean {
  return endpoint.pathname.startsWith('/devtools/browser/');
}
