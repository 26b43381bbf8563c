import { statfs } from 'node:fs/promises';

/** Bytes an unprivileged writer (a browser's uid) may still write on the file system holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return stats.bavail * stats.bsize;
}
