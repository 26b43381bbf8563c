// As root, the service hands parts of its state to unprivileged users it starts: the
// embedded PostgreSQL runs as `postgres`, each local Chromium under a uid of its own. They
// must be able to walk the path to their folder. The service never opens a folder it
// does not own to reach them: when a folder above its data directory is closed (a
// checkout under /root, a `mktemp -d` folder), that state lives under a root-owned
// tree in /var/lib instead, whose folders anyone may pass through but not list.
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';

export const SYSTEM_STATE_ROOT = '/var/lib/browser-device-operator';

/** Search permission for others (o+x): the bit unprivileged users need to pass a folder. */
const OTHERS_MAY_PASS = 0o001;

export function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** True when every existing folder above `target` (not `target` itself) lets any user pass. */
export function everyFolderAboveIsTraversable(target: string): boolean {
  let current = path.dirname(path.resolve(target));
  while (true) {
    if (existsSync(current) && (statSync(current).mode & OTHERS_MAY_PASS) === 0) return false;
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/**
 * The folder under /var/lib/browser-device-operator that stands in for `forPath`: named
 * by a digest of its absolute path, so each data directory has its own and a restart
 * finds the same one.
 */
export function systemStateDirectoryFor(forPath: string): string {
  const digest = createHash('sha256').update(path.resolve(forPath)).digest('hex').slice(0, 12);
  return path.join(SYSTEM_STATE_ROOT, digest);
}

/** Creates `dir` and the folders between it and SYSTEM_STATE_ROOT: root's, passable, not listable. */
export async function preparePassableDirectory(dir: string): Promise<void> {
  const target = path.resolve(dir);
  if (path.relative(SYSTEM_STATE_ROOT, target).startsWith('..')) throw new Error(`${target} is not under ${SYSTEM_STATE_ROOT}`);
  await mkdir(target, { recursive: true });
  for (let current = target; current !== path.dirname(SYSTEM_STATE_ROOT); current = path.dirname(current)) {
    await chmod(current, 0o711);
  }
}
