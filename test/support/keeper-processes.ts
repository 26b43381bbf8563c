import { readdir, readFile, readlink } from 'node:fs/promises';
import { keepersDirectory } from '../../server/browser/keeper-directory';

/**
 * The browser keeper processes of a data directory: those with one of its keeper sockets
 * open (a keeper listens on its socket for as long as it lives).
 */
export async function keepersOf(dataDir: string): Promise<number[]> {
  const unix = await readFile('/proc/net/unix', 'utf8');
  const inodes = new Set(
    unix
      .split('\n')
      .filter((line) => line.includes(keepersDirectory(dataDir)))
      .map((line) => line.trim().split(/\s+/)[6]),
  );
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes('keeper-process')) continue;
    for (const fd of await readdir(`/proc/${entry}/fd`).catch(() => [])) {
      const inode = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${entry}/fd/${fd}`).catch(() => ''))?.[1];
      if (inode !== undefined && inodes.has(inode)) {
        found.push(Number(entry));
        break;
      }
    }
  }
  return found;
}

/** Chromium processes running on a profile of the data directory (their --user-data-dir is in it). */
export async function browsersOf(dataDir: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (args.some((arg) => arg.startsWith(`--user-data-dir=${dataDir}`))) found.push(Number(entry));
  }
  return found;
}
