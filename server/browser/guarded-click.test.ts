import type { Browser, Page, Protocol } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_FLAGS } from './local-provider.js';
import { clickElement } from './guarded-click.js';
import { launchChromiumAsTheService, makeTempDir, startPageServer, type PageServer } from '../../test/support/browser-fixtures.js';

let server: PageServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  server = await startPageServer();
  temp = await makeTempDir('guarded-click-');
  browser = await launchChromiumAsTheService(temp.dir, CHROMIUM_FLAGS);
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await temp?.remove();
});

describe('clickElement', () => {
  it('is done once the page asked to navigate, without waiting for the next document', async () => {
    await page.goto(server.url('/slow-link'));
    const session = await page.createCDPSession();
    await session.send('Page.enable');
    const navigationRequested = new Promise<void>((resolve) => session.once('Page.frameRequestedNavigation', (_event: Protocol.Page.FrameRequestedNavigationEvent) => resolve()));
    const link = (await page.$('#go'))!;
    const started = Date.now();
    await clickElement(link, navigationRequested);
    const tookMs = Date.now() - started;
    // The next document's server answers after 1.5 s: asking the old one whether the press
    // reached it would wait for that (Chromium holds its commands until the next commits).
    expect(tookMs).toBeLessThan(1_000);
    await page.waitForNavigation({ waitUntil: 'domcontentloaded' });
    expect(await page.title()).toBe('Slow next');
    await session.detach();
  });
});
