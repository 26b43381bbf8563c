import { mkdir, rm } from 'node:fs/promises';
import puppeteer, { type Browser } from 'puppeteer-core';
import { PuppeteerBrowserHandle } from './browser-handle.js';
import {
  findChromium,
  killProcessGroup,
  reclaimProfile,
  removePidFile,
  writePidFile,
} from './chromium-process.js';
import { egressFlags } from './egress-flags.js';
import { profileDirectory } from './profile-directory.js';
import { BrowserLaunchError, type BrowserHandle, type BrowserProvider, type EgressGate, type LaunchRequest } from './types.js';

export interface LocalBrowserProviderOptions {
  /** Chromium executable; null looks for chromium, chromium-browser, google-chrome on PATH. */
  chromiumPath: string | null;
  /** Profiles live in <dataDir>/profiles/<deviceId>. */
  dataDir: string;
  headless?: boolean;
  /** The egress proxy every browser must use; null only in tests of the provider itself. */
  egress: EgressGate | null;
}

/**
 * Flags known to work in the containers this service runs in. The crash reporter stays
 * off: its crashpad handler daemonizes into a session of its own, out of reach of the
 * process-group kill that guarantees no Chromium outlives the service.
 */
export const CHROMIUM_FLAGS = [
  '--disable-crash-reporter',
  '--disable-breakpad',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const LAUNCH_TIMEOUT_MS = 30_000;
const PROTOCOL_TIMEOUT_MS = 60_000;
/** A graceful close flushes cookies to disk; past this the process group is killed. */
const GRACEFUL_CLOSE_MS = 5_000;
const VIEWPORT = { width: 1280, height: 800 };

/**
 * One Chromium process per device on a persistent profile. Each Chromium leads its own
 * process group (puppeteer spawns it detached), so closing kills renderers and helpers
 * too, and a pid file in the profile lets killOrphans() clean up after a crashed run.
 * puppeteer's own SIGINT/SIGTERM/SIGHUP handlers stay off: the service decides when to
 * shut down; puppeteer still kills the group if the Node process exits.
 */
export class LocalBrowserProvider implements BrowserProvider {
  readonly kind = 'local' as const;
  private readonly running = new Set<BrowserHandle>();
  private executablePath: string | null = null;

  constructor(private readonly options: LocalBrowserProviderOptions) {}

  async launch(request: LaunchRequest): Promise<BrowserHandle> {
    const executablePath = (this.executablePath ??= findChromium(this.options.chromiumPath));
    const profileDir = profileDirectory(this.options.dataDir, request.deviceId);
    await mkdir(profileDir, { recursive: true });
    await reclaimProfile(profileDir);

    let browser: Browser;
    try {
      browser = await puppeteer.launch({
        executablePath,
        userDataDir: profileDir,
        headless: this.options.headless ?? true,
        pipe: true,
        args: [...CHROMIUM_FLAGS, ...(this.options.egress ? egressFlags(this.options.egress) : [])],
        defaultViewport: VIEWPORT,
        timeout: LAUNCH_TIMEOUT_MS,
        protocolTimeout: PROTOCOL_TIMEOUT_MS,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch {
      throw new BrowserLaunchError(`Chromium did not start for device ${request.deviceId}`, true);
    }
    const pid = browser.process()?.pid;
    if (pid === undefined) {
      await browser.close().catch(() => undefined);
      throw new BrowserLaunchError(`Chromium did not start for device ${request.deviceId}`, true);
    }
    await writePidFile(profileDir, pid);

    const handle: PuppeteerBrowserHandle = new PuppeteerBrowserHandle({
      deviceId: request.deviceId,
      pid,
      browser,
      context: browser.defaultBrowserContext(),
      egress: this.options.egress,
      release: async () => {
        this.running.delete(handle);
        await Promise.race([browser.close().catch(() => undefined), delay(GRACEFUL_CLOSE_MS)]);
        await killProcessGroup(pid);
        await removePidFile(profileDir, pid);
      },
    });
    browser.once('disconnected', () => {
      if (!this.running.delete(handle)) return;
      handle.notifyDisconnected();
      // After a crash the group may still hold renderers; reap them and the pid file.
      void killProcessGroup(pid)
        .then(() => removePidFile(profileDir, pid))
        .catch(() => undefined);
    });
    this.running.add(handle);
    return handle;
  }

  async destroyProfile(deviceId: string): Promise<void> {
    await rm(profileDirectory(this.options.dataDir, deviceId), { recursive: true, force: true });
  }

  async isReachable(): Promise<boolean> {
    try {
      findChromium(this.options.chromiumPath);
      return true;
    } catch {
      return false;
    }
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.running].map((handle) => handle.close()));
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
