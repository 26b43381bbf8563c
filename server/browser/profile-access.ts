// Who may enter the local profiles. As root: the data directory and the profiles folder
// let only the browsers' group pass (root:<gid>, 0710: no listing, no files), and a
// profile belongs to the browser running on it alone: owned by that browser's uid, 0700,
// while it runs; root's, 0700, once it stopped, so a uid handed to another browser later
// finds every other profile closed. As any other user, everything is that user's, 0700.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { preparePassableDirectory, SYSTEM_STATE_ROOT } from '../os/system-state-directory.js';
import { killOrphansIn } from './chromium-process.js';
import { localProfilesRoot } from './profile-directory.js';
import type { BrowserUser } from './browser-users.js';

/** The browser's HOME and XDG folders, inside its profile so nothing else is written. */
export const BROWSER_HOME = 'home';

/**
 * Creates the profiles folder (localProfilesRoot) with the modes above and returns it.
 * `browserGid` is null when browsers run as the service's own user.
 */
export async function prepareProfilesRoot(dataDir: string, browserGid: number | null): Promise<string> {
  const root = localProfilesRoot(dataDir);
  if (browserGid === null) {
    await mkdir(root, { recursive: true });
    await chmod(root, 0o700);
  } else {
    await mkdir(dataDir, { recursive: true });
    if (isUnder(root, SYSTEM_STATE_ROOT)) {
      await preparePassableDirectory(path.dirname(root));
      await moveProfilesOnce(path.join(path.resolve(dataDir), 'profiles'), root);
    } else {
      await letGroupPass(dataDir, browserGid);
    }
    await mkdir(root, { recursive: true });
    await chown(root, 0, browserGid);
    await chmod(root, 0o710);
  }
  // No browser runs yet: every profile is closed, including any a former version left
  // open (0755, or owned by a uid that a crash never took back).
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (browserGid === null) await chmod(path.join(root, entry.name), 0o700);
    else await takeProfileBack(path.join(root, entry.name));
  }
  return root;
}

/** Makes the profile (and its HOME) the browser's own before it starts. */
export async function handProfileTo(profileDir: string, user: BrowserUser | null): Promise<void> {
  await mkdir(path.join(profileDir, BROWSER_HOME), { recursive: true, mode: 0o700 });
  // coreutils' chown -R walks with directory descriptors and never follows a link, so
  // nothing a browser left in its profile can redirect it elsewhere.
  if (user !== null) await promisify(execFile)('chown', ['-R', '--no-dereference', `${user.uid}:${user.gid}`, profileDir]);
  await chmod(profileDir, 0o700);
}

/** Closes a stopped browser's profile to every uid but root's. */
export async function takeProfileBack(profileDir: string): Promise<void> {
  await chown(profileDir, 0, 0);
  await chmod(profileDir, 0o700);
}

/**
 * Lets members of `gid` pass `dir` (g+x) when others may not already, taking the group
 * bits away from its previous group: browsers may walk through, never list or read.
 */
async function letGroupPass(dir: string, gid: number): Promise<void> {
  const { mode, uid, gid: currentGid } = await stat(dir);
  if ((mode & 0o001) !== 0 || (currentGid === gid && (mode & 0o010) !== 0)) return;
  await chown(dir, uid, gid);
  await chmod(dir, (mode & 0o7707) | 0o010);
}

/**
 * Profiles kept in the data directory by a version that ran browsers as root move to
 * their place under /var/lib once, so devices keep their cookies. Orphan browsers still
 * running on them are killed first: their command line names the old path.
 */
async function moveProfilesOnce(from: string, to: string): Promise<void> {
  if (!existsSync(from) || existsSync(to)) return;
  await killOrphansIn(from);
  try {
    await rename(from, to);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EXDEV')) throw error;
    await cp(from, to, { recursive: true, verbatimSymlinks: true });
    await rm(from, { recursive: true, force: true });
  }
}

function isUnder(target: string, root: string): boolean {
  return !path.relative(root, target).startsWith('..');
}
