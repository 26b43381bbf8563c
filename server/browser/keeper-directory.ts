// Where a data directory's browser keepers listen: <dataDir>/keepers/<deviceId>.sock.
// The folder is the service's user's alone (0700): browsers run under other uids as
// root, pages have no file access, and a Unix socket is no TCP port, so only the service
// reaches a kept browser's DevTools endpoint.
import { chmod, chown, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

const SOCKET_SUFFIX = '.sock';

export function keepersDirectory(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'keepers');
}

/** Creates the folder, or closes it again to everyone but this process's user. */
export async function prepareKeepersDirectory(dataDir: string): Promise<string> {
  const dir = keepersDirectory(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chown(dir, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
  await chmod(dir, 0o700);
  return dir;
}

/** The socket of the keeper of the device (or warm profile) `deviceId`. */
export function keeperSocket(dir: string, deviceId: string): string {
  return path.join(dir, `${path.basename(deviceId)}${SOCKET_SUFFIX}`);
}

/** The device ids that have a socket in the folder, live or stale. */
export async function keeperSocketIds(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return [];
    throw error;
  }
  return entries.filter((name) => name.endsWith(SOCKET_SUFFIX)).map((name) => name.slice(0, -SOCKET_SUFFIX.length));
}

/** Removes the socket a dead keeper left. */
export async function removeKeeperSocket(dir: string, deviceId: string): Promise<void> {
  await rm(keeperSocket(dir, deviceId), { force: true });
}
