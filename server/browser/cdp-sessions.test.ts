import type { Browser, BrowserContext, CDPSession, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openCdpSession } from './cdp-sessions.js';
import { CHROMIUM_FLAGS } from './local-provider.js';
import { launchChromiumAsTheService, makeTempDir, startPageServer, type PageServer } from '../../test/support/browser-fixtures.js';

describe('sessions of the service on a page target', () => {
  let browser: Browser;
  let profile: Awaited<ReturnType<typeof makeTempDir>>;
  let pages: PageServer;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    profile = await makeTempDir('cdp-sessions-');
    browser = await launchChromiumAsTheService(profile.dir, CHROMIUM_FLAGS);
    pages = await startPageServer();
  });
  afterAll(async () => {
    await browser?.close();
    await profile?.remove();
    await pages?.close();
  });
  beforeEach(async () => {
    context = await browser.createBrowserContext();
    page = await context.newPage();
  });
  afterEach(() => context.close());

  async function openTwiceAndDetach(open: () => Promise<CDPSession>): Promise<void> {
    const sessions = await Promise.all([open(), open()]);
    for (const session of sessions) await session.detach();
  }

  it('opened at once, and detached, leave puppeteer knowing the page and telling its navigations', async () => {
    await openTwiceAndDetach(() => openCdpSession(page.target()));
    const changed: string[] = [];
    context.on('targetchanged', (target) => changed.push(target.url()));
    await page.goto(pages.url('/next'));

    expect(await context.pages()).toEqual([page]);
    expect(changed).toContain(pages.url('/next'));
  });

  // Why openCdpSession exists: when this fails, puppeteer tells the two kinds of session
  // apart by itself, and openCdpSession can go back to plain createCDPSession.
  it('are needed: puppeteer forgets a page two of its own attaches at once were detached from', async () => {
    await openTwiceAndDetach(() => page.createCDPSession());
    expect(await context.pages()).toEqual([]);
  });
});
