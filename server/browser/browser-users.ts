// The users local Chromium processes run as when the service runs as root. Chromium
// refuses its sandbox as root, and a browser running as root could read everything. So
// each running browser gets a uid of its own from a configured range, and all browsers
// share one group: one browser, however compromised, can neither read another device's
// profile (0700, owned by that browser's uid) nor signal or trace another browser.
// A uid is claimed for as long as one browser runs, with an OS lock (file-lock.ts) in a
// machine-wide folder, so service instances on one machine never share a uid and a
// crashed instance's claims end with it.
import { randomInt } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { tryLockFile, type FileLock } from '../os/file-lock.js';
import { killProcessesOfUser, uidsOfRunningProcesses } from '../os/processes.js';
import { BrowserLaunchError } from './types.js';

export interface BrowserUserRange {
  firstUid: number;
  lastUid: number;
  /** The group every browser runs in: the only one allowed to pass the profiles' folders. */
  gid: number;
}

export interface BrowserUser {
  uid: number;
  gid: number;
}

/** A uid held by one running browser. */
export interface BrowserUserClaim {
  readonly user: BrowserUser;
  /** The claim's locked descriptor, which the browser's keeper inherits so the claim lasts as long as it does. */
  readonly lockFd: number;
  /** Kills whatever still runs under the uid (a process that left the browser's group), then frees it. */
  release(): Promise<void>;
  /**
   * Closes this process's descriptor of the claim and kills nothing: the browser's keeper
   * holds the claim from here on (a hand-over to the next service), and drops it when it exits.
   */
  letGo(): void;
}

const CLAIMS_DIR = '/run/browser-device-operator/browser-uids';

export class BrowserUsers {
  /** Uids this process holds, skipped without asking the kernel. */
  private readonly held = new Set<number>();

  constructor(private readonly range: BrowserUserRange) {}

  get gid(): number {
    return this.range.gid;
  }

  /** Refuses a range or group that an account of this machine uses: its owner could read the profiles. */
  async checkUnused(): Promise<void> {
    const [passwd, group] = await Promise.all([readFile('/etc/passwd', 'utf8'), readFile('/etc/group', 'utf8')]);
    const clash = accountClash(this.range, passwd, group);
    if (clash !== null) throw new BrowserLaunchError(clash, false);
  }

  /**
   * Kills what runs under a uid of the range that no live service holds: processes a
   * killed service left behind, such as Chromium's crash handlers, which run in sessions
   * of their own out of reach of the browser's process-group kill. Called at start.
   */
  async reclaimAbandoned(): Promise<void> {
    await mkdir(CLAIMS_DIR, { recursive: true, mode: 0o700 });
    for (const uid of await uidsOfRunningProcesses()) {
      if (uid < this.range.firstUid || uid > this.range.lastUid || this.held.has(uid)) continue;
      const lock = await tryLockFile(path.join(CLAIMS_DIR, String(uid)));
      if (lock === null) continue; // another live service's browser
      try {
        await killProcessesOfUser(uid);
      } finally {
        lock.release();
      }
    }
  }

  /**
   * A uid no other browser on this machine runs as, until released: `preferredUid` when
   * it is free (the uid a profile was last handed to), otherwise the search starts
   * at a random uid of the range: each try of a uid another service holds costs a
   * flock(1) process, and services on one machine that all started from the first uid
   * would try every uid the others hold before finding a free one (measured: 160 ms to
   * 2 s of a wake with 31 uids held by other services on a busy machine).
   */
  async claim(preferredUid: number | null = null): Promise<BrowserUserClaim> {
    await mkdir(CLAIMS_DIR, { recursive: true, mode: 0o700 });
    const size = this.range.lastUid - this.range.firstUid + 1;
    const start = randomInt(size);
    const inRange = preferredUid !== null && preferredUid >= this.range.firstUid && preferredUid <= this.range.lastUid;
    // The preferred uid first (a profile already owned by it needs no handing over), then the range.
    const range = Array.from({ length: size }, (_, index) => this.range.firstUid + ((start + index) % size));
    const candidates = inRange ? [preferredUid, ...range.filter((uid) => uid !== preferredUid)] : range;
    for (const uid of candidates) {
      if (this.held.has(uid)) continue;
      const lock = await tryLockFile(path.join(CLAIMS_DIR, String(uid)));
      if (lock === null) continue;
      this.held.add(uid);
      // Held now: anything running under this uid is left over from an earlier holder.
      await killProcessesOfUser(uid);
      return this.claimOf(uid, lock);
    }
    throw new BrowserLaunchError(
      `every browser uid (${this.range.firstUid}-${this.range.lastUid}, OPERATOR_BROWSER_UIDS) is in use on this machine`,
      true,
    );
  }

  /**
   * The claim of `uid` once the keeper that held it for a kept browser has exited, to kill
   * what is left under it and free it; null when someone else claimed it meanwhile.
   */
  async takeBack(uid: number): Promise<BrowserUserClaim | null> {
    if (this.held.has(uid)) return null;
    await mkdir(CLAIMS_DIR, { recursive: true, mode: 0o700 });
    const lock = await tryLockFile(path.join(CLAIMS_DIR, String(uid)));
    if (lock === null) return null;
    this.held.add(uid);
    return this.claimOf(uid, lock);
  }

  private claimOf(uid: number, lock: FileLock): BrowserUserClaim {
    let released: Promise<void> | null = null;
    return {
      user: { uid, gid: this.range.gid },
      lockFd: lock.fd,
      letGo: () => {
        if (released !== null) return;
        released = Promise.resolve();
        lock.release();
        this.held.delete(uid);
      },
      release: () =>
        (released ??= (async () => {
          try {
            await killProcessesOfUser(uid);
          } finally {
            lock.release();
            this.held.delete(uid);
          }
        })()),
    };
  }
}

/**
 * A sentence naming the first account whose uid falls in the range, or group with the
 * browsers' gid, in /etc/passwd and /etc/group text; null when there is none.
 */
export function accountClash(range: BrowserUserRange, passwd: string, group: string): string | null {
  for (const [name, id] of entries(passwd)) {
    if (id >= range.firstUid && id <= range.lastUid) {
      return `uid ${id} of account "${name}" is in OPERATOR_BROWSER_UIDS (${range.firstUid}-${range.lastUid}): choose a range no account uses`;
    }
  }
  for (const [name, id] of entries(group)) {
    if (id === range.gid) return `gid ${id} of group "${name}" is OPERATOR_BROWSER_GID: choose a gid no group uses`;
  }
  return null;
}

/** name and id (third field) of each line of a passwd(5) or group(5) file. */
function entries(text: string): Array<[string, number]> {
  return text
    .split('\n')
    .map((line) => line.split(':'))
    .filter((fields) => fields.length >= 3 && /^\d+$/.test(fields[2]!))
    .map((fields) => [fields[0]!, Number(fields[2])]);
}
