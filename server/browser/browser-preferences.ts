// What a local device's browser starts with in its profile's Preferences, written by the
// service before each start (docs/api.md, "Stagehand 4"): no page of the browser may show
// the browser's own pages or the host's files, whoever navigates (a client's extension
// with the tabs permission included), and the service's copies of the Stagehand extension
// get no file access.
import { randomBytes, createHash } from 'node:crypto';
import { chown, lstat, mkdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserUser } from './browser-users.js';

/**
 * Chromium honours these in the profile as it would the URLBlocklist policy: a navigation
 * to them ends on an error page (ERR_BLOCKED_BY_ADMINISTRATOR) without the page's bindings.
 */
export const BLOCKED_URLS = ['chrome://*', 'chrome-untrusted://*', 'devtools://*', 'file://*'];
/**
 * The browser's own UI that headless Chromium keeps open: blocked, it would turn into error
 * pages listed as `page`, which the agent and the live view could take for the device's.
 * Its bindings serve the omnibox (suggestions from the device's own history).
 */
export const ALLOWED_BROWSER_UI = ['chrome://omnibox-popup.top-chrome'];

/**
 * Copies of the Stagehand extension one browser start may load, one after the other: the
 * file-access entry of a copy's id is written before the start, and uninstalling the copy
 * deletes it, so each load needs a copy (a directory, hence an id) not used since.
 */
export const STAGEHAND_COPIES = 8;

/** The directory of copy `n` of the Stagehand extension, shared by every device of this data directory. */
export function stagehandCopyDir(copiesRoot: string, n: number): string {
  return path.join(copiesRoot, String(n));
}

/** Chromium's id for an extension loaded unpacked from `dir` (its real path): SHA-256 of the path, first 32 hex digits as a..p. */
export function unpackedExtensionId(realDir: string): string {
  const hex = createHash('sha256').update(realDir).digest('hex').slice(0, 32);
  return [...hex].map((digit) => String.fromCharCode(97 + parseInt(digit, 16))).join('');
}

/** The ids the Stagehand copies under `copiesRoot` get (the root's real path). */
export async function stagehandCopyIds(copiesRoot: string): Promise<string[]> {
  await mkdir(copiesRoot, { recursive: true, mode: 0o755 });
  const real = await realpath(copiesRoot);
  return Array.from({ length: STAGEHAND_COPIES }, (_, n) => unpackedExtensionId(stagehandCopyDir(real, n)));
}

/**
 * Writes the blocklist and the copies' file-access entries into `<profile>/Default/Preferences`,
 * keeping what else the file holds. Called before the browser starts, when no process of its
 * uid runs: the profile's contents belong to that uid, so nothing here follows a link it may
 * have left (the file is replaced by a rename, a linked Default is removed).
 */
export async function writeBrowserPreferences(profileDir: string, user: BrowserUser | null, stagehandIds: readonly string[]): Promise<void> {
  const defaultDir = path.join(profileDir, 'Default');
  const dirStat = await lstat(defaultDir).catch(() => null);
  if (dirStat !== null && !dirStat.isDirectory()) await rm(defaultDir, { force: true });
  if (dirStat === null || !dirStat.isDirectory()) await mkdir(defaultDir, { mode: 0o700 });
  const file = path.join(defaultDir, 'Preferences');
  const fileStat = await lstat(file).catch(() => null);
  let preferences: Record<string, any> = {};
  if (fileStat?.isFile()) {
    try {
      const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) preferences = parsed as Record<string, any>;
    } catch {
      // A file Chrome left half-written starts over; Chrome rebuilds its defaults.
    }
  }
  preferences.policy = { ...(isObject(preferences.policy) ? preferences.policy : {}), url_blocklist: BLOCKED_URLS, url_allowlist: ALLOWED_BROWSER_UI };
  const extensions = isObject(preferences.extensions) ? preferences.extensions : {};
  const settings = isObject(extensions.settings) ? extensions.settings : {};
  for (const id of stagehandIds) settings[id] = { ...(isObject(settings[id]) ? settings[id] : {}), newAllowFileAccess: false };
  preferences.extensions = { ...extensions, settings };
  const temporary = path.join(defaultDir, `.Preferences.${randomBytes(8).toString('hex')}`);
  await writeFile(temporary, JSON.stringify(preferences), { mode: 0o600, flag: 'wx' });
  if (user !== null) {
    await chown(temporary, user.uid, user.gid);
    await chown(defaultDir, user.uid, user.gid);
  }
  await rename(temporary, file);
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
