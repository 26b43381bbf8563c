import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { tryLockFile, type FileLock } from '../../os/file-lock';

// One process per host. The data directory is the host (host-id.ts): it holds the host
// id, the browser profiles and the embedded database. Two processes on it would both
// reconcile "their" devices, relaunch them on the same profiles and kill each other's
// browsers as orphans. The process that starts first holds an OS lock on a file in the
// directory for as long as it lives (server/os/file-lock.ts): a second one is refused,
// and a crashed one never blocks its restart, since the kernel drops its lock.

export const DATA_DIRECTORY_LOCK_FILE = 'service.lock';

/** Holds `dataDir` (created if missing) for this process until release(), or refuses with one line naming it. */
export async function holdDataDirectory(dataDir: string): Promise<FileLock> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, DATA_DIRECTORY_LOCK_FILE);
  const lock = await tryLockFile(file);
  if (lock === null) {
    const holder = await readHolderPid(file);
    throw new Error(
      `data directory ${dataDir} is in use by another running service${holder === null ? '' : ` (pid ${holder})`}: ` +
        'stop it, or give this one another OPERATOR_DATA_DIR',
    );
  }
  // For the message above, in the next process; the lock itself is what counts.
  lock.record(`${process.pid}\n`);
  return lock;
}

async function readHolderPid(file: string): Promise<number | null> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return /^\d+\s*$/.test(text) ? Number(text) : null;
}
