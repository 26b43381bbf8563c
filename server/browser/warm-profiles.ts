// Which local profiles belong to warm browsers, that no device took yet. A marker file
// per warm profile, in a folder of the profiles root only the service may enter, written
// before the browser starts and removed at hand-over: a restart finds the profiles of
// every warm browser the previous process left and removes them, browser and all.
import { access, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { reclaimProfile } from './chromium-process.js';
import { forgetProfileOwner, profileOwner } from './profile-access.js';
import { profileIn } from './profile-directory.js';

/** Starts with a dot: no device id (profile-directory.ts) can name it. */
const WARM_MARKERS = '.warm';

/** Marks `profileId` as a warm profile; throws when it already is one. */
export async function markWarmProfile(profilesRoot: string, profileId: string): Promise<void> {
  profileIn(profilesRoot, profileId); // refuses an id that is no safe directory name
  await mkdir(path.join(profilesRoot, WARM_MARKERS), { recursive: true, mode: 0o700 });
  await writeFile(markerOf(profilesRoot, profileId), '', { flag: 'wx', mode: 0o600 });
}

/** Whether the profile is still a warm one, which no device has taken. */
export async function isWarmProfile(profilesRoot: string, profileId: string): Promise<boolean> {
  try {
    await access(markerOf(profilesRoot, profileId));
    return true;
  } catch {
    return false;
  }
}

/** The profile is a device's from now on. */
export async function unmarkWarmProfile(profilesRoot: string, profileId: string): Promise<void> {
  await rm(markerOf(profilesRoot, profileId), { force: true });
}

/**
 * Removes the warm profiles a previous process left (crashed or stopped while they
 * were launching), after killing a Chromium still running on one. Called at start,
 * before any launch. Returns the profile ids removed.
 */
export async function removeWarmLeftovers(profilesRoot: string): Promise<string[]> {
  const markersDir = path.join(profilesRoot, WARM_MARKERS);
  await mkdir(markersDir, { recursive: true, mode: 0o700 });
  const removed: string[] = [];
  for (const profileId of await readdir(markersDir)) {
    let profileDir: string | null;
    try {
      profileDir = profileIn(profilesRoot, profileId);
    } catch {
      profileDir = null; // not a name this service writes: only the marker goes
    }
    if (profileDir !== null) {
      await reclaimProfile(profileDir, await profileOwner(profileDir)).catch(() => undefined); // absent when the crash came before its mkdir
      await rm(profileDir, { recursive: true, force: true });
      await forgetProfileOwner(profileDir);
      removed.push(profileId);
    }
    await rm(path.join(markersDir, profileId), { force: true });
  }
  return removed;
}

function markerOf(profilesRoot: string, profileId: string): string {
  return path.join(profilesRoot, WARM_MARKERS, path.basename(profileIn(profilesRoot, profileId)));
}
