import path from 'node:path';
import { everyFolderAboveIsTraversable, runsAsRoot, systemStateDirectoryFor } from '../os/system-state-directory.js';
import { BrowserLaunchError } from './types.js';

/** Device ids become directory names, so only path-safe ids are accepted. */
const SAFE_DEVICE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** <dataDir>/profiles/<deviceId>, absolute, for a device id that cannot escape it. */
export function profileDirectory(dataDir: string, deviceId: string): string {
  return profileIn(path.join(path.resolve(dataDir), 'profiles'), deviceId);
}

/** <profilesRoot>/<deviceId>, for a device id that cannot escape it. */
export function profileIn(profilesRoot: string, deviceId: string): string {
  if (!SAFE_DEVICE_ID.test(deviceId)) {
    throw new BrowserLaunchError(`device id "${deviceId}" cannot name a profile directory`, false);
  }
  return path.join(profilesRoot, deviceId);
}

/**
 * Where local Chromium profiles live: <dataDir>/profiles, unless the service runs as
 * root and a folder above the data directory is closed to the browsers' uids (a
 * checkout under /root); then under /var/lib (see server/os/system-state-directory.ts).
 */
export function localProfilesRoot(dataDir: string): string {
  if (!runsAsRoot() || everyFolderAboveIsTraversable(dataDir)) return path.join(path.resolve(dataDir), 'profiles');
  return path.join(systemStateDirectoryFor(dataDir), 'profiles');
}
