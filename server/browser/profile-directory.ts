import path from 'node:path';
import { BrowserLaunchError } from './types.js';

/** Device ids become directory names, so only path-safe ids are accepted. */
const SAFE_DEVICE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** <dataDir>/profiles/<deviceId>, absolute, for a device id that cannot escape it. */
export function profileDirectory(dataDir: string, deviceId: string): string {
  if (!SAFE_DEVICE_ID.test(deviceId)) {
    throw new BrowserLaunchError(`device id "${deviceId}" cannot name a profile directory`, false);
  }
  return path.join(path.resolve(dataDir), 'profiles', deviceId);
}
