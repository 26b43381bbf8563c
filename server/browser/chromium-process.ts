// Operating-system side of local Chromium processes: finding the executable, the pid
// file each profile carries, and killing process groups left over from a crashed run.
import { execFileSync } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { open, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { localProfilesRoot } from './profile-directory.js';
import { BrowserLaunchError } from './types.js';

export const PID_FILE_NAME = 'chromium.pid';

const EXECUTABLE_NAMES = ['chromium', 'chromium-browser', 'google-chrome'];

/** Files Chromium uses to claim a profile; left behind by a crash, they block the next start. */
const SINGLETON_FILES = ['SingletonLock', 'SingletonSocket', 'SingletonCookie'];

const EXIT_WAIT_MS = 5_000;
const EXIT_POLL_MS = 25;
/**
 * Files of /proc open at once, across every scan of the processes. A service stopping
 * retires every browser at once, and each scans every process while it waits for its
 * group to go: with 64 devices that was 17,000 files open at once, past the process's
 * limit (EMFILE), and the stop failed.
 */
export const PROC_READS_AT_ONCE = 64;

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
 * Makes a profile startable after a crash: kills a Chromium still running on it (named
 * by the pid file or by the SingletonLock link, "<hostname>-<pid>") and removes the
 * singleton files. Only processes whose command line names this profile are touched.
 */
export async function reclaimProfile(profileDir: string): Promise<void> {
  const candidates = [await readPidFile(profileDir), await readSingletonLockPid(profileDir)];
  for (const pid of candidates) {
    if (pid !== null && (await isChromiumOfProfile(pid, profileDir))) {
      await killProcessGroup(pid);
    }
  }
  await removePidFile(profileDir);
  for (const name of SINGLETON_FILES) {
    await rm(path.join(profileDir, name), { force: true });
  }
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

/**
 * SIGKILLs the process group a Chromium leads (it was started as a group leader, so
 * its renderers, zygotes and utility processes share the group) and waits until no
 * member is left.
 */
export async function killProcessGroup(pid: number): Promise<void> {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch (error) {
      if (!isErrorCode(error, 'ESRCH')) throw error;
    }
  }
  await waitUntil(async () => !(await isRunning(pid)) && (await processGroupMembers(pid)).length === 0);
}

/**
 * SIGKILLs every process whose real uid is `uid` and waits until none is left. Only for
 * a browser uid this process holds (browser-users.ts): whatever runs under it is ours.
 */
export async function killProcessesOfUser(uid: number): Promise<void> {
  const kill = async () => {
    const found = await processesOfUser(uid);
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (error) {
        if (!isErrorCode(error, 'ESRCH')) throw error;
      }
    }
    return found.length === 0;
  };
  await waitUntil(kill);
}

/** Live (non-zombie) processes whose real uid is `uid`. */
export async function processesOfUser(uid: number): Promise<number[]> {
  return (await liveProcesses()).filter((process) => process.uid === uid).map((process) => process.pid);
}

/** The real uids that live (non-zombie) processes run as. */
export async function uidsOfRunningProcesses(): Promise<Set<number>> {
  return new Set((await liveProcesses()).map((process) => process.uid));
}

async function liveProcesses(): Promise<Array<{ pid: number; uid: number }>> {
  const found: Array<{ pid: number; uid: number }> = [];
  for (const [pid, status] of await readEveryProcess('status')) {
    // "Uid:\t<real>\t<effective>\t<saved>\t<filesystem>", "State:\t<letter> (<name>)"
    const realUid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    if (realUid !== undefined && state !== 'Z' && state !== 'X') found.push({ pid, uid: Number(realUid) });
  }
  return found;
}

/**
 * /proc/<pid>/<file> of every process, PROC_READS_AT_ONCE at a time: one after the other,
 * the couple of hundred reads of a busy machine took 26 ms of every uid claim and
 * release. Processes that ended meanwhile are left out.
 */
async function readEveryProcess(file: 'status' | 'stat'): Promise<Array<[number, string]>> {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const texts = await Promise.all(pids.map((pid) => readProcFile(`/proc/${pid}/${file}`)));
  return pids.flatMap((pid, index) => (texts[index] === null ? [] : [[Number(pid), texts[index]!] as [number, string]]));
}

let procReadsOpen = 0;
const procReadsWaiting: Array<() => void> = [];

/** A /proc file, once fewer than PROC_READS_AT_ONCE are being read; null when its process has ended. */
async function readProcFile(file: string): Promise<string | null> {
  while (procReadsOpen >= PROC_READS_AT_ONCE) await new Promise<void>((resolve) => procReadsWaiting.push(resolve));
  procReadsOpen += 1;
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    // Left out: a process that ended, and one /proc does not show this user (hidepid),
    // which is no browser of its. Any other failure (no file descriptor left) would hide a
    // live process.
    if (['ENOENT', 'ESRCH', 'EACCES', 'EPERM'].some((code) => isErrorCode(error, code))) return null;
    throw error;
  } finally {
    procReadsOpen -= 1;
    procReadsWaiting.shift()?.();
  }
}

export async function waitForExit(pid: number): Promise<boolean> {
  return waitUntil(async () => !(await isRunning(pid)));
}

/** Live (non-zombie) processes whose process group id is `groupId`. */
export async function processGroupMembers(groupId: number): Promise<number[]> {
  const members: number[] = [];
  for (const [pid, stat] of await readEveryProcess('stat')) {
    const fields = afterCommandName(stat);
    // After the command name: state, ppid, pgrp.
    if (fields[0] !== 'Z' && fields[0] !== 'X' && Number(fields[2]) === groupId) members.push(pid);
  }
  return members;
}

async function waitUntil(condition: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + EXIT_WAIT_MS;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, EXIT_POLL_MS));
  }
  return condition();
}

/** Alive and not a zombie waiting to be reaped. */
export async function isRunning(pid: number): Promise<boolean> {
  const state = (await statFields(pid))?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** The pid of the process's parent, or null when it is gone. */
export async function parentPid(pid: number): Promise<number | null> {
  const parent = (await statFields(pid))?.[1];
  return parent === undefined ? null : Number(parent);
}

/** /proc/<pid>/stat fields after the command name (state first), or null when gone. */
async function statFields(pid: number): Promise<string[] | null> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return afterCommandName(stat);
}

/** The fields of a /proc/<pid>/stat text after the command name, state first. */
function afterCommandName(stat: string): string[] {
  // The command name is parenthesised and may itself contain spaces or parentheses.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
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

function isErrorCode(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}
