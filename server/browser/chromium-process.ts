// Operating-system side of local Chromium processes: finding the executable, the pid
// file each profile carries, and killing process groups left over from a crashed run.
import { execFileSync } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { lstat, open, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isErrorCode, isRunning, killProcessGroup } from '../os/processes.js';
import { localProfilesRoot } from './profile-directory.js';
import { BrowserLaunchError } from './types.js';

export const PID_FILE_NAME = 'chromium.pid';

const EXECUTABLE_NAMES = ['chromium', 'chromium-browser', 'google-chrome'];

/** Files Chromium uses to claim a profile; left behind by a crash, they block the next start. */
const SINGLETON_FILES = ['SingletonLock', 'SingletonSocket', 'SingletonCookie'];

/**
 * Where Chromium puts the socket its SingletonSocket link points to: a folder of its own
 * under the browser's temporary folder (a socket's path is limited to 107 bytes). The
 * browser gets no TMPDIR (chromium-command.ts), so that is /tmp.
 */
const SINGLETON_SOCKET_FOLDER = /^\/tmp\/org\.chromium\.Chromium\.[A-Za-z0-9]{6}$/;

/**
 * The Chromium executable: the configured path, or the first of chromium,
 * chromium-browser, google-chrome found on PATH (looked up by the shell, since the
 * search path belongs to the OS rather than to this service's configuration).
 */
export function findChromium(configuredPath: string | null): string {
  if (configuredPath !== null) {
    if (!isExecutable(configuredPath)) {
      throw new BrowserLaunchError(
        `Chromium not found at ${configuredPath}: install it (apt-get install chromium) or fix CHROMIUM_PATH`,
        false,
      );
    }
    return configuredPath;
  }
  for (const name of EXECUTABLE_NAMES) {
    const found = lookUpOnPath(name);
    if (found !== null) return found;
  }
  throw new BrowserLaunchError(
    `No Chromium found on PATH (tried ${EXECUTABLE_NAMES.join(', ')}): apt-get install chromium, or set CHROMIUM_PATH`,
    false,
  );
}

function lookUpOnPath(name: string): string | null {
  try {
    const found = execFileSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', name], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return found !== '' && isExecutable(found) ? found : null;
  } catch {
    return null;
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Written as a new file: the profile belongs to the browser's uid, which could have put a
 * link to some other file in its place, and the service must never write through it.
 */
export async function writePidFile(profileDir: string, pid: number): Promise<void> {
  const file = path.join(profileDir, PID_FILE_NAME);
  await rm(file, { force: true });
  await writeFile(file, `${pid}\n`, { flag: 'wx' });
}

/**
 * Removes the pid file if it still names `pid` (or unconditionally without one), so a
 * late cleanup of a dead browser never deletes the file of the one launched after it.
 */
export async function removePidFile(profileDir: string, pid?: number): Promise<void> {
  if (pid !== undefined && (await readPidFile(profileDir)) !== pid) return;
  await rm(path.join(profileDir, PID_FILE_NAME), { force: true });
}

/**
 * Makes a profile startable after a crash, or ready to be removed: kills a Chromium
 * still running on it (named by the pid file or by the SingletonLock link,
 * "<hostname>-<pid>") and removes the singleton files with the socket folder they point
 * to. Only processes whose command line names this profile are touched. `owner`: the uid
 * the profile's browsers run as, null when they run as the service's own user.
 */
export async function reclaimProfile(profileDir: string, owner: number | null): Promise<void> {
  const candidates = [await readPidFile(profileDir), await readSingletonLockPid(profileDir)];
  for (const pid of candidates) {
    if (pid !== null && (await isChromiumOfProfile(pid, profileDir))) {
      await killProcessGroup(pid);
    }
  }
  await removePidFile(profileDir);
  await removeSingletonSocketFolder(profileDir, owner ?? process.getuid!());
  for (const name of SINGLETON_FILES) {
    await rm(path.join(profileDir, name), { force: true });
  }
}

/**
 * Chromium removes its socket folder when it closes, not when it is killed (a deleted
 * device's browser is: browser-handle.ts), and the folder is outside the profile: left
 * alone, /tmp would gain one for every such browser over the host's life. The link is
 * the browser uid's to write, so only a folder shaped as Chromium makes them and owned
 * by that uid is removed: a link aimed elsewhere removes nothing but its own files.
 */
async function removeSingletonSocketFolder(profileDir: string, owner: number): Promise<void> {
  const folder = await singletonSocketFolder(profileDir);
  if (folder !== null) await removeSocketFolder(folder, owner);
}

/** The folder a profile's SingletonSocket link names (a running Chromium's), or null without one. */
export async function singletonSocketFolder(profileDir: string): Promise<string | null> {
  return readlink(path.join(profileDir, 'SingletonSocket')).then(path.dirname, () => null);
}

/**
 * Removes `folder` if it is one Chromium made for its singleton socket (shaped as it
 * names them, directly under /tmp) and owned by `owner`, the uid its browser runs as.
 */
export async function removeSocketFolder(folder: string, owner: number): Promise<void> {
  if (!SINGLETON_SOCKET_FOLDER.test(folder)) return;
  const stats = await lstat(folder).catch(() => null);
  if (stats === null || !stats.isDirectory() || stats.uid !== owner) return;
  await rm(folder, { recursive: true, force: true });
}

/**
 * Kills every Chromium process group running on a profile of the data directory, kept
 * or not (tests clean up with it; the service's start spares kept browsers through
 * killOrphansIn). Returns the pids that were killed.
 */
export async function killOrphans(dataDir: string): Promise<number[]> {
  return killOrphansIn(localProfilesRoot(dataDir));
}

/**
 * killOrphans() for the profiles under `profilesDir`, but for the profiles named in
 * `kept`, whose browsers a live keeper still holds (keeper/keeper-process.ts).
 */
export async function killOrphansIn(profilesDir: string, kept: ReadonlySet<string> = new Set()): Promise<number[]> {
  let deviceDirs: string[];
  try {
    deviceDirs = await readdir(profilesDir);
  } catch (error) {
    if (isErrorCode(error, 'ENOENT')) return [];
    throw error;
  }
  const killed: number[] = [];
  for (const deviceDir of deviceDirs) {
    if (kept.has(deviceDir)) continue;
    const profileDir = path.join(profilesDir, deviceDir);
    const pid = await readPidFile(profileDir);
    if (pid === null) continue;
    if (await isChromiumOfProfile(pid, profileDir)) {
      await killProcessGroup(pid);
      killed.push(pid);
    }
    await removePidFile(profileDir);
  }
  return killed;
}

/** Pid reuse guard: the process must be a Chromium started on exactly this profile. */
export async function isChromiumOfProfile(pid: number, profileDir: string): Promise<boolean> {
  let cmdline: string;
  try {
    cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return false;
  }
  const args = cmdline.split('\0');
  const executable = path.basename(args[0] ?? '');
  const isChromium = /chrom/i.test(executable);
  return isChromium && args.includes(`--user-data-dir=${path.resolve(profileDir)}`) && (await isRunning(pid));
}

/** Read without following a link the browser's uid may have put in its place. */
async function readPidFile(profileDir: string): Promise<number | null> {
  let file;
  try {
    file = await open(path.join(profileDir, PID_FILE_NAME), fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (error) {
    if (isErrorCode(error, 'ENOENT') || isErrorCode(error, 'ELOOP')) return null;
    throw error;
  }
  try {
    return parsePid(await file.readFile('utf8'));
  } finally {
    await file.close();
  }
}

async function readSingletonLockPid(profileDir: string): Promise<number | null> {
  try {
    const target = await readlink(path.join(profileDir, 'SingletonLock'));
    return parsePid(target.slice(target.lastIndexOf('-') + 1));
  } catch {
    return null;
  }
}

function parsePid(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  const pid = Number(trimmed);
  return pid > 1 ? pid : null;
}
