// An exclusive lock on a file that the kernel drops when the process holding it dies, so
// a crashed process never blocks the next one. It is flock(2), which Node does not
// offer: util-linux's flock(1) is handed this process's open descriptor (as its fd 3)
// and locks it. A flock belongs to the open file description, which this process keeps
// open after flock(1) exits, so the lock stays held until release() closes it or the
// process ends. Node opens files close-on-exec: the processes the service starts
// (Chromium, PostgreSQL) never inherit the descriptor, and never keep a lock alive.
import { spawn } from 'node:child_process';
import { closeSync, constants as fs, ftruncateSync, openSync, writeSync } from 'node:fs';

export interface FileLock {
  readonly file: string;
  /**
   * The locked descriptor, e.g. for a child process to inherit: the lock is the open file
   * description's, so it then lasts until the last process holding it closes it or ends.
   */
  readonly fd: number;
  /** Replaces the file's content, e.g. with the holder's pid for other processes' messages. */
  record(text: string): void;
  /** Drops the lock; idempotent. */
  release(): void;
}

/** flock(1)'s exit code when the file is locked by someone else (EX_TEMPFAIL). */
const HELD_ELSEWHERE = 75;

/**
 * Locks `file` (created 0600 if missing), or returns null when another open description
 * holds it: another process, or another lock of this same process.
 */
export async function tryLockFile(file: string): Promise<FileLock | null> {
  const fd = openSync(file, fs.O_RDWR | fs.O_CREAT | fs.O_NOFOLLOW, 0o600);
  let status: number;
  try {
    status = await runFlock(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (status !== 0) {
    closeSync(fd);
    if (status === HELD_ELSEWHERE) return null;
    throw new Error(`flock(1) failed on ${file} (exit ${status})`);
  }
  let held = true;
  return {
    file,
    fd,
    record(text) {
      ftruncateSync(fd, 0);
      writeSync(fd, text, 0);
    },
    release() {
      if (!held) return;
      held = false;
      closeSync(fd);
    },
  };
}

function runFlock(fd: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', ['--exclusive', '--nonblock', '--conflict-exit-code', String(HELD_ELSEWHERE), '3'], {
      stdio: ['ignore', 'ignore', 'ignore', fd],
    });
    child.once('error', (error) => reject(new Error(`flock(1) from util-linux is needed: ${error.message}`)));
    child.once('exit', (code) => resolve(code ?? -1));
  });
}
