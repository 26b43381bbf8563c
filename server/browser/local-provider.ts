import { existsSync } from 'node:fs';
import path from 'node:path';
import { mkdir, readdir, rm } from 'node:fs/promises';
import puppeteer, { type Browser } from 'puppeteer-core';
import { killProcessGroup } from '../os/processes.js';
import { runsAsRoot } from '../os/system-state-directory.js';
import { PuppeteerBrowserHandle } from './browser-handle.js';
import { decideSandbox, kernelOffersSandbox, type SandboxDecision } from './browser-sandbox.js';
import { BrowserUsers, type BrowserUserClaim, type BrowserUserRange } from './browser-users.js';
import { chromiumCommand, SETPRIV_PATH } from './chromium-command.js';
import { DEVICE_DISABLED_FEATURES } from './chromium-features.js';
import { requireRoomFor } from './data-directory-full.js';
import {
  findChromium,
  killOrphansIn,
  reclaimProfile,
  removePidFile,
  writePidFile,
} from './chromium-process.js';
import { egressFlags } from './egress-flags.js';
import { stagehandCopyIds, writeBrowserPreferences } from './browser-preferences.js';
import { stagehandExtensionDir } from './stagehand-extension.js';
import { KeeperConnection, liveKeepers } from './keeper-connection.js';
import { keeperSocket, prepareKeepersDirectory, removeKeeperSocket } from './keeper-directory.js';
import { startKeeper } from './keeper-launch.js';
import { forgetProfileOwner, handProfileTo, prepareProfilesRoot, profileOwner, takeProfileBack } from './profile-access.js';
import { localProfilesRoot, profileIn } from './profile-directory.js';
import {
  BrowserLaunchError,
  type BrowserHandle,
  type BrowserProvider,
  type EgressGate,
  type LaunchRequest,
  type WarmLauncher,
} from './types.js';
import { isWarmProfile, markWarmProfile, removeWarmLeftovers, unmarkWarmProfile } from './warm-profiles.js';

export interface LocalBrowserProviderOptions {
  /** Chromium executable; null looks for chromium, chromium-browser, google-chrome on PATH. */
  chromiumPath: string | null;
  /** Profiles live in <dataDir>/profiles/<deviceId> (see localProfilesRoot). */
  dataDir: string;
  headless?: boolean;
  /** The egress proxy every browser must use; null only in tests of the provider itself. */
  egress: EgressGate | null;
  /** The uids and group browsers run as when the service runs as root. */
  users: BrowserUserRange;
  /** Start Chromium without its sandbox when the kernel offers none (local use only). */
  allowUnsandboxed: boolean;
  /** With no service connected, how long a browser's keeper waits for one before closing it (OPERATOR_BROWSER_KEEP_SECS). */
  keepSecs: number;
}

/** What start() found once, for every launch. */
interface LocalBrowserSetup {
  chromiumPath: string;
  /** null when the service does not run as root: browsers run as its own user. */
  users: BrowserUsers | null;
  profilesRoot: string;
  keepersDir: string;
  sandbox: SandboxDecision;
}

/**
 * Flags known to work in the containers this service runs in. The crash reporter stays
 * off: its crashpad handler daemonizes into a session of its own, out of reach of the
 * process-group kill that guarantees no Chromium outlives its keeper.
 */
export const CHROMIUM_FLAGS = [
  '--disable-crash-reporter',
  '--disable-breakpad',
  '--disable-gpu',
  '--disable-quic',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  DEVICE_DISABLED_FEATURES,
];

const LAUNCH_TIMEOUT_MS = 30_000;
const PROTOCOL_TIMEOUT_MS = 60_000;
/** A graceful close flushes cookies to disk; past this the process group is killed. */
const GRACEFUL_CLOSE_MS = 5_000;
const VIEWPORT = { width: 1280, height: 800 };

/**
 * One Chromium process per device on a persistent profile, started and held by a browser
 * keeper (keeper/keeper-process.ts) so that it outlives the service: a restart on the
 * same data directory re-attaches to it through the keeper's socket. Each Chromium leads
 * its own process group, so closing kills renderers and helpers too, and a pid file in
 * the profile lets the start-up kill a Chromium whose keeper is gone.
 *
 * Chromium always runs with its sandbox (unless an operator allowed otherwise where the
 * kernel offers none), never as root: as root, each browser runs under a uid of its own
 * (browser-users.ts) on a profile only that uid may enter (profile-access.ts).
 */
export class LocalBrowserProvider implements BrowserProvider {
  readonly kind = 'local' as const;
  private readonly running = new Set<BrowserHandle>();
  private setup: Promise<LocalBrowserSetup> | null = null;
  /** Per device, the cleanup of its last browser; a launch on the profile waits for it. */
  private readonly retiring = new Map<string, Promise<void>>();

  /**
   * Warm browsers start exactly like a device's (own uid, sandbox, egress proxy), on a
   * profile marked warm until a device takes it (warm-profiles.ts).
   */
  readonly warm: WarmLauncher = {
    launch: (profileId) => this.launchWarm(profileId),
    handOver: async (profileId) => unmarkWarmProfile((await this.ready()).profilesRoot, profileId),
    discard: (profileId) => this.destroyProfile(profileId),
  };

  constructor(private readonly options: LocalBrowserProviderOptions) {}

  /** Finds Chromium, prepares the profiles and decides the sandbox, once; launch() does it if start() was not called. */
  async start(): Promise<string[]> {
    const setup = await this.ready();
    return setup.sandbox.warning === null ? [] : [setup.sandbox.warning];
  }

  async launch(request: LaunchRequest): Promise<BrowserHandle> {
    return this.launchOn(request.deviceId);
  }

  /**
   * Chromium on the profile named `profileId` (a device's, or a warm one: a device's to
   * be): the one its keeper still keeps, or a new one under a new keeper.
   */
  private async launchOn(profileId: string): Promise<BrowserHandle> {
    const setup = await this.ready();
    const profileDir = profileIn(setup.profilesRoot, profileId);
    await this.retiring.get(profileId);
    const kept = await KeeperConnection.open(keeperSocket(setup.keepersDir, profileId), profileId);
    if (kept !== null) {
      if (kept.identity.egressUrl === (this.options.egress?.url ?? null)) return this.attach(profileId, profileDir, kept, null, true);
      // Started behind a proxy that no longer listens (the egress port changed): its pages reach nothing.
      await this.closeKeptOn(kept, profileDir, setup.users);
    }
    await removeKeeperSocket(setup.keepersDir, profileId);
    // A browser that already runs needs no room; a new one does, or it fails for no stated reason.
    await requireRoomFor(setup.profilesRoot);

    await mkdir(profileDir, { recursive: true, mode: 0o700 });
    const owner = await profileOwner(profileDir);
    await reclaimProfile(profileDir, owner);
    // The uid the profile already belongs to, when free: no walk of its tree (profile-access.ts).
    const claim = setup.users === null ? null : await setup.users.claim(owner);
    let connection: KeeperConnection | null;
    try {
      await handProfileTo(profileDir, claim?.user ?? null);
      await writeBrowserPreferences(profileDir, claim?.user ?? null, await stagehandCopyIds(this.stagehandCopiesRoot(profileDir)));
      const command = chromiumCommand({
        chromiumPath: setup.chromiumPath,
        user: claim?.user ?? null,
        profileDir,
        headless: this.options.headless ?? true,
        sandboxed: setup.sandbox.sandboxed,
        flags: [...CHROMIUM_FLAGS, ...(this.options.egress ? egressFlags(this.options.egress) : [])],
      });
      const socketPath = keeperSocket(setup.keepersDir, profileId);
      await startKeeper(
        {
          kind: 'local',
          deviceId: profileId,
          socketPath,
          keepSecs: this.options.keepSecs,
          incarnation: null,
          egressUrl: this.options.egress?.url ?? null,
          ...command,
          uid: claim?.user.uid ?? null,
          gracefulCloseMs: GRACEFUL_CLOSE_MS,
        },
        claim?.lockFd ?? null,
        LAUNCH_TIMEOUT_MS,
      );
      connection = await KeeperConnection.open(socketPath, profileId);
    } catch (error) {
      await this.giveBack(profileDir, claim);
      // The disk may have filled meanwhile (other devices write too).
      await requireRoomFor(setup.profilesRoot, error);
      throw new BrowserLaunchError(`Chromium did not start for device ${profileId}`, true);
    }
    if (connection?.identity.pid == null) {
      await connection?.closeBrowser();
      await this.giveBack(profileDir, claim);
      throw new BrowserLaunchError(`Chromium did not start for device ${profileId}`, true);
    }
    await writePidFile(profileDir, connection.identity.pid);
    return this.attach(profileId, profileDir, connection, claim, false);
  }

  /**
   * puppeteer over the keeper's socket. `claim`: the uid claim this process took for a
   * new browser (the keeper holds it too); null for a kept one, whose claim only its
   * keeper holds until it exits.
   */
  private async attach(
    profileId: string,
    profileDir: string,
    connection: KeeperConnection,
    claim: BrowserUserClaim | null,
    reattached: boolean,
  ): Promise<BrowserHandle> {
    const { pid, uid, incarnation } = connection.identity;
    let browser: Browser;
    try {
      browser = await puppeteer.connect({ transport: connection, defaultViewport: VIEWPORT, protocolTimeout: PROTOCOL_TIMEOUT_MS });
    } catch {
      await connection.closeBrowser();
      await this.retire(pid, profileDir, claim ?? (await this.uidBack(uid)));
      throw new BrowserLaunchError(`Chromium did not answer for device ${profileId}`, true);
    }

    let retired: Promise<void> | null = null;
    // After a close or a crash, once; the device's next launch waits for it.
    const retire = () => (retired ??= this.track(profileId, (async () => this.retire(pid, profileDir, claim ?? (await this.uidBack(uid))))()));
    const handle: PuppeteerBrowserHandle = new PuppeteerBrowserHandle({
      deviceId: profileId,
      pid,
      incarnation,
      reattached,
      location: null,
      browser,
      context: browser.defaultBrowserContext(),
      egress: this.options.egress,
      downloadsDir: path.join(profileDir, 'downloads'),
      stagehand: this.stagehand(profileDir),
      release: async (profile) => {
        this.running.delete(handle);
        // The keeper asks Chromium to close (cookies flushed) and kills its group, or, for a
        // profile deleted next, only kills the group; then it exits.
        await (profile === 'kept' ? connection.closeBrowser() : connection.discardBrowser());
        await retire();
      },
      detach: async () => {
        this.running.delete(handle);
        await browser.disconnect().catch(() => undefined);
        await connection.closed;
        claim?.letGo();
      },
    });
    browser.once('disconnected', () => {
      if (!this.running.delete(handle)) return;
      handle.notifyDisconnected();
      // The keeper exited with its browser; the group may still hold renderers: reap them and the pid file.
      void retire().catch(() => undefined);
    });
    this.running.add(handle);
    return handle;
  }

  /**
   * Where the copies of the Stagehand extension live (stagehand-extension.ts), read-only for
   * browsers: beside the profiles root, in the folder the browsers' uids may pass through
   * (the data directory, or the system state directory when a folder above the data
   * directory is closed to them, as under /root or a 0700 temporary folder).
   */
  private stagehandCopiesRoot(profileDir: string): string {
    return path.join(path.dirname(path.dirname(profileDir)), 'stagehand-extension');
  }

  private stagehand(profileDir: string): { source: string; copiesRoot: string } | null {
    const source = stagehandExtensionDir();
    return source === null ? null : { source, copiesRoot: this.stagehandCopiesRoot(profileDir) };
  }

  async destroyProfile(deviceId: string): Promise<void> {
    const setup = await this.ready();
    await this.retiring.get(deviceId);
    const profileDir = profileIn(setup.profilesRoot, deviceId);
    await reclaimProfile(profileDir, await profileOwner(profileDir));
    await rm(profileDir, { recursive: true, force: true });
    await forgetProfileOwner(profileDir);
    await unmarkWarmProfile(setup.profilesRoot, deviceId);
  }

  /** The profile directories under the profiles root (its dot folders are the service's own, no device's). */
  async profileIds(): Promise<string[]> {
    const entries = await readdir((await this.ready()).profilesRoot, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')).map((entry) => entry.name);
  }

  /** Marked before anything is written, so a crash at any point leaves nothing a restart keeps. */
  private async launchWarm(profileId: string): Promise<BrowserHandle> {
    await markWarmProfile((await this.ready()).profilesRoot, profileId);
    try {
      return await this.launchOn(profileId);
    } catch (error) {
      await this.destroyProfile(profileId);
      throw error;
    }
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
    await Promise.all(this.retiring.values());
  }

  async detach(): Promise<void> {
    await Promise.all([...this.running].map((handle) => handle.detach()));
    await Promise.all(this.retiring.values());
  }

  async keptDeviceIds(): Promise<string[]> {
    const setup = await this.ready();
    const attached = new Set([...this.running].map((handle) => handle.deviceId));
    return [...(await liveKeepers(setup.keepersDir)).keys()].filter((deviceId) => !attached.has(deviceId));
  }

  async closeKept(deviceId: string): Promise<void> {
    const setup = await this.ready();
    await this.closeKeeper(setup.keepersDir, profileIn(setup.profilesRoot, deviceId), deviceId, setup.users);
    await takeProfileBack(profileIn(setup.profilesRoot, deviceId)).catch(() => undefined);
  }

  /** Has the keeper of `profileId` close its browser, then kills what is left of it and frees its uid. */
  private async closeKeeper(keepersDir: string, profileDir: string, profileId: string, users: BrowserUsers | null): Promise<void> {
    const connection = await KeeperConnection.open(keeperSocket(keepersDir, profileId), profileId);
    if (connection !== null) await this.closeKeptOn(connection, profileDir, users);
  }

  private async closeKeptOn(connection: KeeperConnection, profileDir: string, users: BrowserUsers | null): Promise<void> {
    const { pid, uid } = connection.identity;
    await connection.closeBrowser();
    if (pid !== null) await killProcessGroup(pid);
    if (pid !== null) await removePidFile(profileDir, pid).catch(() => undefined);
    const claim = uid === null || users === null ? null : await users.takeBack(uid);
    await claim?.release();
  }

  /** The claim of a kept browser's uid, once its keeper has exited; null as any other user. */
  private async uidBack(uid: number | null): Promise<BrowserUserClaim | null> {
    const users = (await this.ready()).users;
    return uid === null || users === null ? null : users.takeBack(uid);
  }

  private ready(): Promise<LocalBrowserSetup> {
    this.setup ??= this.prepare();
    return this.setup;
  }

  /**
   * Before any launch: the browsers kept across a restart stay as they are, everything
   * else a previous process left goes. A kept warm browser is closed (it belongs to no
   * device); uids no live service or keeper claims are swept; profiles are closed again
   * but for the kept browsers'; a Chromium without a keeper is killed (by the pid file in
   * its profile); unused warm profiles are removed.
   */
  private async prepare(): Promise<LocalBrowserSetup> {
    const chromiumPath = findChromium(this.options.chromiumPath);
    const users = runsAsRoot() ? new BrowserUsers(this.options.users) : null;
    if (users !== null) {
      if (!existsSync(SETPRIV_PATH)) {
        throw new BrowserLaunchError(`${SETPRIV_PATH} (util-linux) is needed to run Chromium as an unprivileged user`, false);
      }
      await users.checkUnused();
    }
    const keepersDir = await prepareKeepersDirectory(this.options.dataDir);
    const kept = new Set((await liveKeepers(keepersDir)).keys());
    const knownProfilesRoot = localProfilesRoot(this.options.dataDir);
    for (const profileId of kept) {
      if (!(await isWarmProfile(knownProfilesRoot, profileId))) continue;
      await this.closeKeeper(keepersDir, profileIn(knownProfilesRoot, profileId), profileId, users);
      kept.delete(profileId);
    }
    // Kept browsers' keepers hold their uids: only what runs under unheld uids is killed.
    await users?.reclaimAbandoned();
    const profilesRoot = await prepareProfilesRoot(this.options.dataDir, users?.gid ?? null, kept);
    await killOrphansIn(profilesRoot, kept);
    // Warm browsers of a previous process: none survives it, and their profiles go.
    await removeWarmLeftovers(profilesRoot);
    const sandbox = decideSandbox(await sandboxAvailable(users), this.options.allowUnsandboxed);
    return { chromiumPath, users, profilesRoot, keepersDir, sandbox };
  }

  /** No process of the browser's group left, its pid file gone, its profile and uid given back. */
  private async retire(pid: number | null, profileDir: string, claim: BrowserUserClaim | null): Promise<void> {
    try {
      if (pid !== null) {
        await killProcessGroup(pid);
        await removePidFile(profileDir, pid);
      }
    } finally {
      await this.giveBack(profileDir, claim);
    }
  }

  /** Records `cleanup` as the device's retiring browser until it settles. */
  private track(deviceId: string, cleanup: Promise<void>): Promise<void> {
    const settled: Promise<void> = cleanup
      .catch(() => undefined)
      .finally(() => {
        if (this.retiring.get(deviceId) === settled) this.retiring.delete(deviceId);
      });
    this.retiring.set(deviceId, settled);
    return cleanup;
  }

  /** The profile back to root (so the uid, once free, cannot enter it), then the uid back. */
  private async giveBack(profileDir: string, claim: BrowserUserClaim | null): Promise<void> {
    if ((await this.ready()).users === null) return;
    try {
      await takeProfileBack(profileDir);
    } finally {
      await claim?.release();
    }
  }
}

/** Probed under a claimed browser uid when browsers get one: that is whose namespaces count. */
async function sandboxAvailable(users: BrowserUsers | null): Promise<boolean> {
  if (users === null) return kernelOffersSandbox(null);
  const claim = await users.claim();
  try {
    return await kernelOffersSandbox(claim.user);
  } finally {
    await claim.release();
  }
}
