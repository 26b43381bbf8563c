// The Stagehand 4 runtime extension, loaded by the service into a device of the local
// provider for one CDP connection at a time (docs/api.md, "Stagehand 4"). The client never
// loads code: the service loads a copy of the one npm installed with the package, over its
// own pipe connection, after checking that the browser blocks its own pages and the host's
// files (browser-preferences.ts), and checks that the copy has no file access before any
// client sees it; it watches the worker's WebSocket handshakes (the worker's own DevTools
// connection is admitted by them), closes the browser pages it may open, and uninstalls it
// when the connection ends.
import { existsSync } from 'node:fs';
import { cp, mkdir, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, CDPSession } from 'puppeteer-core';
import { openCdpSession } from './cdp-sessions.js';
import { STAGEHAND_COPIES, stagehandCopyDir, stagehandCopyIds } from './browser-preferences.js';

type Send = (method: string, params?: Record<string, unknown>) => Promise<unknown>;

/** The name Stagehand looks for in Extensions.getExtensions. */
export const STAGEHAND_EXTENSION_NAME = 'Stagehand Runtime';
/** The hidden target Stagehand opens so its worker notices the client leaving. */
export const STAGEHAND_CLIENT_TARGET_URL = 'about:blank#stagehand-client-connection';
/** The extension's own pages Stagehand opens (to wake its worker). */
const EXTENSION_PAGES = ['wake-service-worker.html', 'blank.html'];
/** Schemes of pages that reach the browser or the host, closed while the extension is loaded. */
const BROWSER_PAGE_SCHEMES = ['chrome:', 'chrome-untrusted:', 'devtools:', 'file:', 'view-source:'];
const WORKER_WAIT_MS = 10_000;
/** How long a handshake's report is waited for (takeHandshakeKey). */
const HANDSHAKE_REPORT_WAIT_MS = 1_000;
/** Handshake keys kept per extension, newest last. */
const MAX_KEYS = 32;

/** An extension as Extensions.getExtensions describes it. */
export interface ExtensionInfo {
  id: string;
  name: string;
  version: string;
  path: string;
  enabled: boolean;
}

/** Where npm installed the extension, found through the package's own location. */
export function stagehandExtensionDir(): string | null {
  const require = createRequire(import.meta.url);
  for (const base of require.resolve.paths('@browserbasehq/stagehand') ?? []) {
    const dir = path.join(base, '@browserbasehq', 'stagehand', 'dist', 'extension');
    if (existsSync(path.join(dir, 'manifest.json'))) return dir;
  }
  return null;
}

function sendOn(session: CDPSession): Send {
  return (session.send as unknown as Send).bind(session);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether a page URL is one of the browser's own or the host's (closed while the extension runs). */
export function isBrowserPageUrl(url: string | undefined): boolean {
  return url !== undefined && BROWSER_PAGE_SCHEMES.some((scheme) => url.startsWith(scheme));
}

/**
 * The extension in one device's browser (local provider). One owner (a CDP connection) at a
 * time; load() and unload() are serialized.
 */
export class StagehandExtension {
  readonly #browser: Browser;
  /** The package's extension, and where its copies live. */
  readonly #source: string;
  readonly #copiesRoot: string;
  /** The next copy to load: one a load since this browser started has not used. */
  #nextCopy = 0;
  /** Whether the browser was seen to block its own pages (checked once). */
  #blocksBrowserPages = false;
  /** Set once the loaded extension passed the checks: only then does a client see it. */
  #loaded: { id: string; session: CDPSession; info: ExtensionInfo } | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  /** Sec-WebSocket-Key values of the extension worker's handshakes (its own DevTools connection). */
  readonly #keys: string[] = [];

  constructor(browser: Browser, source: string, copiesRoot: string) {
    this.#browser = browser;
    this.#source = source;
    this.#copiesRoot = copiesRoot;
  }

  /** The loaded extension's id, or null. */
  get id(): string | null {
    return this.#loaded?.id ?? null;
  }

  /** Whether `url` is a page of the loaded extension a client may open or see. */
  isOwnPage(url: unknown): boolean {
    const id = this.id;
    return id !== null && typeof url === 'string' && EXTENSION_PAGES.some((page) => url === `chrome-extension://${id}/${page}`);
  }

  /** Whether `url` is the loaded extension's service worker. */
  isOwnWorker(url: string | undefined): boolean {
    const id = this.id;
    return id !== null && url !== undefined && url.startsWith(`chrome-extension://${id}/`);
  }

  /**
   * Whether the extension worker sent a WebSocket handshake with this Sec-WebSocket-Key; a
   * key admits one connection. Chrome reports the handshake before sending it, but the
   * report may trail the request that went through the egress proxy: a key not seen yet
   * is waited for, briefly, while the extension is loaded.
   */
  async takeHandshakeKey(key: string | undefined): Promise<boolean> {
    if (key === undefined || key === '') return false;
    const deadline = Date.now() + HANDSHAKE_REPORT_WAIT_MS;
    for (;;) {
      const index = this.#keys.indexOf(key);
      if (index >= 0) {
        this.#keys.splice(index, 1);
        return true;
      }
      if (this.#loaded === null || Date.now() > deadline) return false;
      await delay(50);
    }
  }

  /**
   * Loads the extension (once per owner), with the checks above; what getExtensions lists.
   * Throws an Error whose message tells the client why it cannot be loaded.
   */
  load(): Promise<ExtensionInfo> {
    return this.#serialized(async () => {
      if (this.#loaded !== null) return this.#loaded.info;
      const session = await openCdpSession(this.#browser.target());
      const send = sendOn(session);
      /** A copy loaded and not yet found safe: uninstalled whatever happens next. */
      let pending: string | null = null;
      try {
        if (!this.#blocksBrowserPages) {
          if (!(await blocksBrowserPages(session))) {
            throw new Error('Stagehand 4 needs this device\'s browser to have been started by this version of the service: put the device to sleep and wake it, then connect again.');
          }
          this.#blocksBrowserPages = true;
        }
        const ids = await stagehandCopyIds(this.#copiesRoot);
        while (this.#nextCopy < STAGEHAND_COPIES) {
          const n = this.#nextCopy;
          this.#nextCopy += 1;
          const dir = await this.#copy(n);
          const { id } = (await send('Extensions.loadUnpacked', { path: dir })) as { id: string };
          pending = id;
          const safe = id === ids[n] && !(await this.#fileAccess(session, id));
          if (safe) {
            const version = ((await send('Extensions.getExtensions')) as { extensions: ExtensionInfo[] }).extensions.find((each) => each.id === id)?.version ?? '';
            // The host path of the service's copy is not the client's business.
            const info = { id, name: STAGEHAND_EXTENSION_NAME, version, path: '', enabled: true };
            this.#loaded = { id, session, info };
            const close = ((event: { targetInfo: { targetId: string; type: string; url: string } }) => this.#closeBrowserPage(send, event.targetInfo)) as never;
            session.on('Target.targetCreated' as never, close);
            session.on('Target.targetInfoChanged' as never, close);
            await send('Target.setDiscoverTargets', { discover: true });
            pending = null;
            return info;
          }
          // A copy whose entry was used up (a service restart forgot the count): uninstalled, and the next one tried.
          await send('Extensions.uninstall', { id }).catch(() => undefined);
          pending = null;
        }
        throw new Error('Stagehand 4 has been connected as often as one start of this device\'s browser allows: put the device to sleep and wake it, then connect again.');
      } catch (error) {
        this.#keys.length = 0;
        this.#loaded = null;
        if (pending !== null) await send('Extensions.uninstall', { id: pending }).catch(() => undefined);
        await session.detach().catch(() => undefined);
        throw error;
      }
    });
  }

  /** Copy `n` of the package's extension (made once per data directory), read-only for browsers. */
  async #copy(n: number): Promise<string> {
    const dir = stagehandCopyDir(this.#copiesRoot, n);
    if (existsSync(path.join(dir, 'manifest.json'))) return dir;
    const temporary = `${dir}.${randomBytes(6).toString('hex')}`;
    await mkdir(this.#copiesRoot, { recursive: true, mode: 0o755 });
    await cp(this.#source, temporary, { recursive: true });
    // Another device's load may have made it meanwhile: the same content either way.
    await rename(temporary, dir).catch(() => rm(temporary, { recursive: true, force: true }));
    return dir;
  }

  /** Uninstalls the extension, so none of its code outlives the connection that asked for it. */
  unload(): Promise<void> {
    return this.#serialized(async () => {
      const loaded = this.#loaded;
      if (loaded === null) return;
      this.#loaded = null;
      this.#keys.length = 0;
      await sendOn(loaded.session)('Extensions.uninstall', { id: loaded.id }).catch(() => undefined);
      await loaded.session.detach().catch(() => undefined);
    });
  }

  #serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Asks the extension's worker whether it may read file: URLs, on a session of the
   * service's own, and keeps that session to record the worker's WebSocket handshakes.
   */
  async #fileAccess(own: CDPSession, id: string): Promise<boolean> {
    const send = sendOn(own);
    const worker = await this.#worker(send, id);
    const { sessionId } = (await send('Target.attachToTarget', { targetId: worker, flatten: true })) as { sessionId: string };
    const session = own.connection()!.session(sessionId)!;
    const on = sendOn(session);
    // The worker's extension bindings come a moment after it starts: asked until it answers.
    const deadline = Date.now() + WORKER_WAIT_MS;
    let access: unknown;
    for (;;) {
      const answer = (await on('Runtime.evaluate', { expression: 'chrome.extension.isAllowedFileSchemeAccess()', awaitPromise: true, returnByValue: true })) as { result?: { value?: unknown } };
      access = answer.result?.value;
      if (typeof access === 'boolean' || Date.now() > deadline) break;
      await delay(50);
    }
    session.on('Network.webSocketWillSendHandshakeRequest' as never, ((event: { request: { headers: Record<string, string> } }) => this.#recordKey(event.request.headers)) as never);
    await on('Network.enable');
    return access !== false;
  }

  #recordKey(headers: Record<string, string>): void {
    const key = Object.entries(headers).find(([name]) => name.toLowerCase() === 'sec-websocket-key')?.[1];
    if (key === undefined) return;
    this.#keys.push(key);
    if (this.#keys.length > MAX_KEYS) this.#keys.shift();
  }

  /** The extension's service worker, woken by its own page when it does not run. */
  async #worker(send: Send, id: string): Promise<string> {
    const deadline = Date.now() + WORKER_WAIT_MS;
    let wake: string | null = null;
    try {
      for (;;) {
        const { targetInfos } = (await send('Target.getTargets')) as { targetInfos: Array<{ targetId: string; type: string; url: string }> };
        const worker = targetInfos.find((info) => info.type === 'service_worker' && info.url.startsWith(`chrome-extension://${id}/`));
        if (worker !== undefined) return worker.targetId;
        if (Date.now() > deadline) throw new Error('the extension worker did not start');
        wake ??= ((await send('Target.createTarget', { url: `chrome-extension://${id}/wake-service-worker.html`, background: true })) as { targetId: string }).targetId;
        await delay(100);
      }
    } finally {
      if (wake !== null) await send('Target.closeTarget', { targetId: wake }).catch(() => undefined);
    }
  }

  /** A page on a browser or host URL, while the extension runs (it may open one with chrome.tabs): closed. */
  #closeBrowserPage(send: Send, info: { targetId: string; type: string; url: string }): void {
    // The browser blocks these pages (an error page shows instead); the tab goes all the same.
    if (this.#loaded === null || info.type !== 'page' || !isBrowserPageUrl(info.url)) return;
    void send('Target.closeTarget', { targetId: info.targetId }).catch(() => undefined);
  }
}

/**
 * Whether the browser blocks its own pages (browser-preferences.ts): a page the service opens
 * on chrome://version must end on Chrome's error page. A browser started before the service
 * wrote the blocklist (kept across an upgrade) does not.
 */
async function blocksBrowserPages(own: CDPSession): Promise<boolean> {
  const send = sendOn(own);
  const { targetId } = (await send('Target.createTarget', { url: 'chrome://version/', background: true })) as { targetId: string };
  try {
    const { sessionId } = (await send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    const page = sendOn(own.connection()!.session(sessionId)!);
    const deadline = Date.now() + WORKER_WAIT_MS;
    for (;;) {
      const answer = (await page('Runtime.evaluate', { expression: 'location.href', returnByValue: true }).catch(() => null)) as { result?: { value?: unknown } } | null;
      const href = answer?.result?.value;
      if (typeof href === 'string' && href.startsWith('chrome-error:')) return true;
      if (typeof href === 'string' && href.startsWith('chrome:')) return false;
      if (Date.now() > deadline) return false;
      await delay(50);
    }
  } finally {
    await send('Target.closeTarget', { targetId }).catch(() => undefined);
  }
}
