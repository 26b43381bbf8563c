// Who may enter the local profiles. As root: the data directory and the profiles folder
// let only the browsers' group pass (root:<gid>, 0710: no listing, no files), and a
// profile belongs to the browser running on it alone: owned by that browser's uid, 0700,
// while it runs; root's, 0700, once it stopped, so a uid handed to another browser later
// finds every other profile closed. As any other user, everything is that user's, 0700.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, lchown, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
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
 * `browserGid` is null when browsers run as the service's own user. The profiles named
 * in `kept` are left as they are: their browsers still run under their keepers.
 */
export async function prepareProfilesRoot(dataDir: string, browserGid: number | null, kept: ReadonlySet<string> = new Set()): Promise<string> {
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
  // No browser of this process runs yet: every other profile is closed, including any a
  // former version left open (0755, or owned by a uid that a crash never took back).
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isDirectory() || kept.has(entry.name)) continue;
    if (browserGid === null) await chmod(path.join(root, entry.name), 0o700);
    else await takeProfileBack(path.join(root, entry.name));
  }
  return root;
}

/**
 * Where the service notes, per profile, the uid its whole tree was last handed to: a
 * folder only root may enter (no device id starts with a dot).
 */
const OWNERS = '.owners';

/**
 * The uid the profile's whole tree belongs to, as noted when it was last handed over;
 * null when it never was or a hand-over did not finish. Claiming that uid again lets the
 * next launch skip walking the tree.
 */
export async function profileOwner(profileDir: string): Promise<number | null> {
  try {
    const text = await readFile(ownerRecord(profileDir), 'utf8');
    return /^\d+$/.test(text) ? Number(text) : null;
  } catch {
    return null;
  }
}

/** Forgets the profile's owner, with the profile. */
export async function forgetProfileOwner(profileDir: string): Promise<void> {
  await rm(ownerRecord(profileDir), { force: true });
}

/**
 * Makes the profile (and its HOME) the browser's own before it starts. A profile whose
 * tree already belongs to `user` (profileOwner), or a new one (its folder and an empty
 * HOME), only needs those two given: since the tree was handed over, only that uid and
 * root wrote inside it, and takeProfileBack closed only the top folder. Any other profile
 * is walked: `chown -R`, a process forked off the service and a few to a few hundred
 * milliseconds with the profile's size.
 */
export async function handProfileTo(profileDir: string, user: BrowserUser | null): Promise<void> {
  const home = path.join(profileDir, BROWSER_HOME);
  await mkdir(home, { recursive: true, mode: 0o700 });
  if (user !== null) {
    if ((await profileOwner(profileDir)) === user.uid) {
      // lchown: never through a link the browser may have put in HOME's place.
      await lchown(home, user.uid, user.gid);
      await chown(profileDir, user.uid, user.gid);
    } else {
      // Forgotten first: a walk cut short leaves a tree of mixed owners, never a wrong note.
      await forgetProfileOwner(profileDir);
      if (await holdsOnlyEmptyHome(profileDir)) {
        await lchown(home, user.uid, user.gid);
        await chown(profileDir, user.uid, user.gid);
      } else {
        // coreutils' chown -R walks with directory descriptors and never follows a link, so
        // nothing a browser left in its profile can redirect it elsewhere.
        await promisify(execFile)('chown', ['-R', '--no-dereference', `${user.uid}:${user.gid}`, profileDir]);
      }
      await mkdir(path.join(path.dirname(profileDir), OWNERS), { recursive: true, mode: 0o700 });
      await writeFile(ownerRecord(profileDir), String(user.uid), { mode: 0o600 });
    }
  }
  await chmod(profileDir, 0o700);
}

/**
 * A profile no browser has run on: nothing in it but HOME, a folder (not a link) with
 * nothing in it. Read while the profile is root's alone, so nothing changes it before
 * it is handed over.
 */
async function holdsOnlyEmptyHome(profileDir: string): Promise<boolean> {
  const entries = await readdir(profileDir, { withFileTypes: true });
  if (entries.length !== 1 || entries[0]!.name !== BROWSER_HOME || !entries[0]!.isDirectory()) return false;
  return (await readdir(path.join(profileDir, BROWSER_HOME))).length === 0;
}

function ownerRecord(profileDir: string): string {
  return path.join(path.dirname(profileDir), OWNERS, path.basename(profileDir));
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
