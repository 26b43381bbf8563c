// What a device keeps between launches when no profile directory keeps it (browserless
// and shared remote browsers, whose devices run in a fresh browser context each time):
// its cookies and the localStorage of the origins its pages visited. Captured when the
// browser closes, written through a DeviceStateStore that the composition root injects
// (PostgreSQL, so any instance can launch any device), and restored into the next context
// before the device's page opens. Not kept: sessionStorage, IndexedDB, Cache Storage,
// service workers and the HTTP cache.
import type { BrowserContext, Cookie, CookieData, Page, Target } from 'puppeteer-core';
import { z } from 'zod';
import { READ_LOCAL_STORAGE_SCRIPT, WRITE_LOCAL_STORAGE_SCRIPT } from './in-page-scripts.js';

const SavedCookieSchema = z.object({
  name: z.string(),
  value: z.string(),
  domain: z.string(),
  path: z.string(),
  secure: z.boolean(),
  httpOnly: z.boolean(),
  sameSite: z.enum(['Strict', 'Lax', 'None', 'Default']).optional(),
  /** Seconds since the epoch; absent for a session cookie, which stays one. */
  expires: z.number().optional(),
  partitionKey: z.union([z.string(), z.object({ sourceOrigin: z.string(), hasCrossSiteAncestor: z.boolean().optional() })]).optional(),
});

const OriginStorageSchema = z.object({
  /** `https://example.com` (scheme, host and port; http and https origins only). */
  origin: z.string(),
  localStorage: z.array(z.object({ name: z.string(), value: z.string() })),
});

export const DeviceStateSchema = z.object({
  cookies: z.array(SavedCookieSchema),
  /** Least recently visited first. */
  origins: z.array(OriginStorageSchema),
});
export type DeviceState = z.infer<typeof DeviceStateSchema>;
type OriginStorage = z.infer<typeof OriginStorageSchema>;

/**
 * Where device states are kept. The browser layer never sees the database: the
 * composition root passes an implementation (server/domain/devices/device-state-store.ts).
 */
export interface DeviceStateStore {
  /** The device's last saved state as it was stored (validated on restore), or null. */
  load(deviceId: string): Promise<unknown>;
  save(deviceId: string, state: DeviceState): Promise<void>;
  /** Forgets the device's state; for a deleted device. */
  remove(deviceId: string): Promise<void>;
  /** The devices a state is saved for. */
  deviceIds(): Promise<string[]>;
}

/** The most recently visited origins whose localStorage is kept; each costs a page load at save and restore. */
export const MAX_SAVED_ORIGINS = 20;
/** Budget of localStorage kept across all origins (JSON size); an origin that does not fit is left out whole. */
export const MAX_SAVED_STORAGE_BYTES = 2 * 1024 * 1024;
/** A stand-in document load is served by the browser itself, so it is quick or broken. */
const ORIGIN_LOAD_TIMEOUT_MS = 5_000;

/**
 * The origins a context's pages have visited, most recent last: where capture reads
 * localStorage from. Seeded with the restored origins, so a device keeps the storage of
 * sites it did not open this time.
 */
export class VisitedOrigins {
  private readonly origins = new Set<string>();

  constructor(initial: Iterable<string> = []) {
    for (const origin of initial) this.origins.add(origin);
  }

  /** Notes every page and frame target of the context as it is created or navigates. */
  watch(context: BrowserContext): void {
    const note = (target: Target) => this.note(target.url());
    context.on('targetcreated', note);
    context.on('targetchanged', note);
  }

  note(url: string): void {
    const origin = webOrigin(url);
    if (origin === null) return;
    this.origins.delete(origin);
    this.origins.add(origin);
  }

  list(): string[] {
    return [...this.origins];
  }
}

/** The device's state in `context` now: its cookies and the localStorage of `origins`. */
export async function captureDeviceState(context: BrowserContext, origins: VisitedOrigins): Promise<DeviceState> {
  const cookies = (await context.cookies()).map(toSavedCookie);
  const recentFirst = origins.list().slice(-MAX_SAVED_ORIGINS).reverse();
  const kept: OriginStorage[] = [];
  let budget = MAX_SAVED_STORAGE_BYTES;
  if (recentFirst.length > 0) {
    await withStandInPage(context, async (open) => {
      for (const origin of recentFirst) {
        const page = await open(origin);
        const items = await page.evaluate(READ_LOCAL_STORAGE_SCRIPT);
        if (items.length === 0) continue;
        const size = Buffer.byteLength(JSON.stringify(items));
        if (size > budget) continue;
        budget -= size;
        kept.push({ origin, localStorage: items });
      }
    });
  }
  return { cookies, origins: kept.reverse() };
}

/**
 * Puts a saved state into a fresh context and returns the origins it covered. A state
 * that does not parse (written by another version, or damaged) is treated as none:
 * a device that cannot start would be worse than one that lost its cookies.
 */
export async function restoreDeviceState(context: BrowserContext, saved: unknown): Promise<string[]> {
  const parsed = DeviceStateSchema.safeParse(saved);
  if (!parsed.success) return [];
  const now = Date.now() / 1000;
  const cookies: CookieData[] = parsed.data.cookies.filter((cookie) => cookie.expires === undefined || cookie.expires > now);
  if (cookies.length > 0) await context.setCookie(...cookies);
  const origins = parsed.data.origins.filter((entry) => webOrigin(entry.origin) === entry.origin);
  if (origins.length > 0) {
    await withStandInPage(context, async (open) => {
      for (const entry of origins) {
        const page = await open(entry.origin);
        await page.evaluate(WRITE_LOCAL_STORAGE_SCRIPT, { items: entry.localStorage });
      }
    });
  }
  return origins.map((entry) => entry.origin);
}

/**
 * Runs `work` with a page of the context that can open any origin without the network:
 * every request it makes is answered with an empty document by the browser itself, and
 * service workers are bypassed, so the origin's own code never runs. localStorage can
 * only be reached from a document of its origin.
 */
async function withStandInPage(context: BrowserContext, work: (open: (origin: string) => Promise<Page>) => Promise<void>): Promise<void> {
  const page = await context.newPage();
  try {
    await page.setBypassServiceWorker(true);
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      request.respond({ status: 200, contentType: 'text/html', body: '<!doctype html>' }).catch(() => undefined);
    });
    await work(async (origin) => {
      await page.goto(`${origin}/`, { waitUntil: 'domcontentloaded', timeout: ORIGIN_LOAD_TIMEOUT_MS });
      return page;
    });
  } finally {
    await page.close().catch(() => undefined);
  }
}

/** Keeps the fields CDP accepts when setting a cookie; session cookies stay session cookies. */
function toSavedCookie(cookie: Cookie): DeviceState['cookies'][number] {
  return {
    name: cookie.name,
    value: cookie.value,
    domain: cookie.domain,
    path: cookie.path,
    secure: cookie.secure,
    httpOnly: cookie.httpOnly ?? false,
    ...(cookie.sameSite === undefined ? {} : { sameSite: cookie.sameSite }),
    ...(!cookie.session && cookie.expires > 0 ? { expires: cookie.expires } : {}),
    ...(cookie.partitionKey === undefined ? {} : { partitionKey: cookie.partitionKey }),
  };
}

/** The origin of an http(s) URL, null for anything else (about:blank, data:, chrome:). */
function webOrigin(url: string): string | null {
  if (!URL.canParse(url)) return null;
  const parsed = new URL(url);
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : null;
}
