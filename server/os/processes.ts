// The processes of this machine as /proc shows them: whether one runs, its parent, the
// members of a process group or of a uid, and killing them and waiting for their end.
import { open, readdir } from 'node:fs/promises';

// How long a wait for a process to end lasts, by default, and how often it looks.
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
 * The buffers /proc files are read into, kept between reads: one holds a stat line (a few
 * hundred bytes) or a status file (under two KiB) in one read. Such a file's size is 0 to
 * stat, so `readFile` read each into a fresh 64 KiB buffer: a scan of the processes
 * allocated megabytes, and beside the service's heap every sixth scan or so set off a full
 * garbage collection (a pair of scans of 88 processes: 42 ms of CPU, against 16 now).
 */
const PROC_READ_BUFFER_BYTES = 4_096;
/** PROC_READS_AT_ONCE at most. */
const spareProcBuffers: Buffer[] = [];

/**
 * SIGKILLs the process group `pid` leads and waits until no member is left (a Chromium
 * is started as a group leader: its renderers, zygotes and utility processes share it).
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
export async function readProcFile(file: string): Promise<string | null> {
  while (procReadsOpen >= PROC_READS_AT_ONCE) await new Promise<void>((resolve) => procReadsWaiting.push(resolve));
  procReadsOpen += 1;
  try {
    return await readProcText(file);
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

/**
 * A /proc file's text, read into a kept buffer until a read finds nothing more: procfs
 * answers a read with whole lines that fit, so a read that did not fill the buffer is not
 * the end of a file of many lines (a memory map).
 */
async function readProcText(file: string): Promise<string> {
  const handle = await open(file, 'r');
  const buffer = spareProcBuffers.pop() ?? Buffer.allocUnsafe(PROC_READ_BUFFER_BYTES);
  try {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    const first = buffer.toString('utf8', 0, bytesRead);
    if (bytesRead === 0) return first;
    // Bytes, not text, are gathered: a read may end inside a character.
    const parts = [Buffer.from(buffer.subarray(0, bytesRead))];
    for (;;) {
      const more = await handle.read(buffer, 0, buffer.length, null);
      if (more.bytesRead === 0) return parts.length === 1 ? first : Buffer.concat(parts).toString('utf8');
      parts.push(Buffer.from(buffer.subarray(0, more.bytesRead)));
    }
  } finally {
    spareProcBuffers.push(buffer);
    await handle.close();
  }
}

/** Whether `pid` ended (or is a zombie) within `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs = EXIT_WAIT_MS): Promise<boolean> {
  return waitUntil(async () => !(await isRunning(pid)), timeoutMs);
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

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = EXIT_WAIT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
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
  const stat = await readProcFile(`/proc/${pid}/stat`);
  return stat === null ? null : afterCommandName(stat);
}

/** The fields of a /proc/<pid>/stat text after the command name, state first. */
function afterCommandName(stat: string): string[] {
  // The command name is parenthesised and may itself contain spaces or parentheses.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Whether `error` is a Node system error with this code (ENOENT, ESRCH...). */
export function isErrorCode(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}
