// Saves and restores a browser context's cookies as JSON in the device's profile
// directory, for browsers whose own profile does not outlive a connection (see
// browserless-provider.ts).
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Cookie, CookieData } from 'puppeteer-core';

export const COOKIE_FILE_NAME = 'cookies.json';

export async function saveCookies(context: BrowserContext, file: string): Promise<void> {
  const cookies = (await context.cookies()).map(toCookieData);
  await mkdir(path.dirname(file), { recursive: true });
  // Write-then-rename, so a crash mid-write never leaves a truncated file behind.
  const temporary = `${file}.tmp`;
  await writeFile(temporary, JSON.stringify(cookies));
  await rename(temporary, file);
}

export async function restoreCookies(context: BrowserContext, file: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isMissingFile(error)) return;
    throw error;
  }
  const cookies = parseCookies(text);
  if (cookies.length > 0) await context.setCookie(...cookies);
}

/** Keeps the fields CDP accepts when setting a cookie; session cookies stay session cookies. */
function toCookieData(cookie: Cookie): CookieData {
  const data: CookieData = {
    name: cookie.name,
    value: cookie.value,
    domain: cookie.domain,
    path: cookie.path,
    secure: cookie.secure,
    httpOnly: cookie.httpOnly,
  };
  if (cookie.sameSite !== undefined) data.sameSite = cookie.sameSite;
  if (!cookie.session && cookie.expires > 0) data.expires = cookie.expires;
  if (cookie.partitionKey !== undefined) data.partitionKey = cookie.partitionKey;
  return data;
}

/** A corrupt or foreign file yields no cookies rather than a device that cannot start. */
function parseCookies(text: string): CookieData[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const now = Date.now() / 1000;
  return parsed.filter(
    (entry): entry is CookieData =>
      typeof entry === 'object' &&
      entry !== null &&
      typeof entry.name === 'string' &&
      typeof entry.value === 'string' &&
      typeof entry.domain === 'string' &&
      (entry.expires === undefined || (typeof entry.expires === 'number' && entry.expires > now)),
  );
}

function isMissingFile(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ENOENT';
}
