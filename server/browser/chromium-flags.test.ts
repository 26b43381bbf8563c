import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../net/egress-policy.js';
import { EgressProxy } from '../net/egress-proxy.js';
import { BROWSER_ISOLATION, CHROMIUM_PATH, launchChromiumAsTheService, makeTempDir, startPageServer, type PageServer } from '../../test/support/browser-fixtures.js';
import { startBrowserlessServer, type BrowserlessServer } from '../../test/support/browserless-server.js';
import { MemoryStateStore } from '../../test/support/memory-state-store.js';
import { deviceEndpoint } from './browserless-endpoint.js';
import { BrowserlessProvider } from './browserless-provider.js';
import { CHROMIUM_FLAGS, LocalBrowserProvider } from './local-provider.js';
import type { BrowserHandle } from './types.js';

// What a device's Chromium does by itself: what it asks of the network, seen where every
// request of it goes (the egress proxy), and the pages it builds beside the device's tabs.
let server: PageServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let proxy: EgressProxy;
let browserless: BrowserlessServer;

beforeAll(async () => {
  server = await startPageServer();
  temp = await makeTempDir('chromium-flags-');
  // Only the test's pages' name resolves, on any machine: a request to any other name is
  // refused, and remembered.
  const onlyLocalhost = async (hostname: string) => {
    if (hostname === 'localhost') return [{ address: '127.0.0.1', family: 4 as const }];
    throw new Error(`${hostname} does not resolve in this test`);
  };
  proxy = await EgressProxy.start(new EgressPolicy({ allowPrivate: true, resolve: onlyLocalhost }));
  browserless = await startBrowserlessServer({ concurrent: 2 });
});

afterAll(async () => {
  await proxy?.close();
  await browserless?.stop();
  await server?.close();
  await temp?.remove();
});

/** Whether the device's Chromium asked Google's autofill server about a form it was shown and typed into. */
async function askedAutofillServer(handle: BrowserHandle): Promise<boolean> {
  const since = Date.now();
  const driver = await handle.page();
  await driver.navigate(server.url('/form'));
  await driver.type('a@example.com', '#email');
  // Without the switch, Chromium asked within moments of a form's parsing, every time.
  await delay(1_500);
  return proxy.refusedSince('https://content-autofill.googleapis.com/', since);
}

describe("a device's Chromium describes none of its pages' forms to Google's autofill server", () => {
  it('on the local provider', async () => {
    const provider = new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir: path.join(temp.dir, 'local'), ...BROWSER_ISOLATION, egress: proxy });
    const handle = await provider.launch({ deviceId: 'flags-local', orgId: 'org-1' });
    try {
      expect(await askedAutofillServer(handle)).toBe(false);
    } finally {
      await handle.close();
    }
  });

  it('on a browserless server', async () => {
    const provider = new BrowserlessProvider({ endpoint: browserless.url, deviceStates: new MemoryStateStore(), egress: proxy, dataDir: path.join(temp.dir, 'browserless'), keepSecs: 20 });
    const handle = await provider.launch({ deviceId: 'flags-browserless', orgId: 'org-1' });
    try {
      expect(await askedAutofillServer(handle)).toBe(false);
    } finally {
      await handle.close();
    }
  });
});

/**
 * The pages a started browser holds besides its tabs, after a page has loaded: without
 * the switch, the address bar's suggestion popup (chrome://omnibox-popup.top-chrome/) is
 * among them from the start, in a renderer of its own.
 */
async function browserPagesBesideTabs(browser: Browser): Promise<string[]> {
  const page = await browser.newPage();
  await page.goto(server.url('/form'));
  await delay(500);
  const session = await page.createCDPSession();
  const { targetInfos } = await session.send('Target.getTargets');
  return targetInfos.filter((target) => target.url.startsWith('chrome://')).map((target) => target.url);
}

describe("a device's Chromium builds no address bar popup, which headless nobody can open", () => {
  it('with the local provider\'s flags', async () => {
    const profile = await makeTempDir('chromium-flags-profile-');
    const browser = await launchChromiumAsTheService(profile.dir, CHROMIUM_FLAGS);
    try {
      expect(await browserPagesBesideTabs(browser)).toEqual([]);
    } finally {
      await browser.close();
      await profile.remove();
    }
  });

  it('on a browserless server, launched as a device is', async () => {
    const browser = await puppeteer.connect({ browserWSEndpoint: deviceEndpoint(browserless.url, null).toString() });
    try {
      expect(await browserPagesBesideTabs(browser)).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
