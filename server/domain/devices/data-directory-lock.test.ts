import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../test/support/service-process';
import { DATA_DIRECTORY_LOCK_FILE, holdDataDirectory } from './data-directory-lock';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'data-dir-lock-'));
  dirs.push(dir);
  return dir;
}

describe('holdDataDirectory', () => {
  it('refuses a second hold, naming the directory and the holder’s pid, until the first is released', async () => {
    const dir = await tempDir();
    const first = await holdDataDirectory(dir);
    await expect(holdDataDirectory(dir)).rejects.toThrow(`data directory ${dir} is in use by another running service (pid ${process.pid})`);
    first.release();
    (await holdDataDirectory(dir)).release();
  });

  it('is not blocked by the lock file of a process that died', async () => {
    const dir = await tempDir();
    // What a crashed process leaves: the file, naming a pid that no longer runs.
    await writeFile(path.join(dir, DATA_DIRECTORY_LOCK_FILE), '2147483646\n');
    (await holdDataDirectory(dir)).release();

    // A real holder killed outright: the kernel drops its lock with it.
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', '-e', `import('./server/domain/devices/data-directory-lock.ts').then(({ holdDataDirectory }) => holdDataDirectory(${JSON.stringify(dir)})).then(() => { console.log('held'); setTimeout(() => {}, 2 ** 31 - 1); })`],
      { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    await expect(holdDataDirectory(dir)).rejects.toThrow(`(pid ${holder.pid})`);
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    (await holdDataDirectory(dir)).release();
  });
});
