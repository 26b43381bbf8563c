import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  FINGERPRINT_FUNCTION,
  OBSERVE_SCRIPT,
  PAGE_BUNDLE,
  AGENT_PAGE_SCRIPT,
  TEXT_OF_SCRIPT,
} from './in-page-scripts.js';
import { CHROMIUM_FLAGS } from './local-provider.js';
import { launchChromiumAsTheService, makeTempDir } from '../../test/support/browser-fixtures.js';

// Pages of a made-up origin, answered by request interception: no server needed.
const ORIGIN = 'http://pages.test';
const PAGES: Record<string, string> = {
  '/start': `<!doctype html><title>Start</title>
    <a href="/next" target="_blank">Open in a new tab</a>
    <button id="save">Save draft</button>`,
  '/next': '<!doctype html><title>Next</title><p id="where">Second page</p>',
};

function answer(request: HTTPRequest): void {
  const body = PAGES[new URL(request.url()).pathname];
  void (body === undefined
    ? request.respond({ status: 404, body: '' })
    : request.respond({ status: 200, contentType: 'text/html', body }));
}

describe('the page bundle', () => {
  it('carries no helper of the Node-side TypeScript runners and no module loading', () => {
    expect(PAGE_BUNDLE).not.toMatch(/\b__name\b/);
    expect(PAGE_BUNDLE).not.toContain('require(');
  });
});

describe('page functions in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let profile: Awaited<ReturnType<typeof makeTempDir>>;

  beforeAll(async () => {
    profile = await makeTempDir('page-functions-');
    browser = await launchChromiumAsTheService(profile.dir, CHROMIUM_FLAGS);
    page = await browser.newPage();
    await page.setRequestInterception(true);
    page.on('request', answer);
    await page.evaluateOnNewDocument(AGENT_PAGE_SCRIPT);
  });

  afterAll(async () => {
    await browser?.close();
    await profile?.remove();
  });

  beforeEach(async () => {
    await page.goto(`${ORIGIN}/start`);
  });

  it('run in the page and leave nothing of the bundle among its globals', async () => {
    const observed = await page.evaluate(OBSERVE_SCRIPT, { limit: 10 });
    expect(observed.map(({ role, name }) => ({ role, name }))).toEqual([
      { role: 'link', name: 'Open in a new tab' },
      { role: 'button', name: 'Save draft' },
    ]);
    expect(await page.evaluate(TEXT_OF_SCRIPT, { selector: '#save' })).toEqual({ kind: 'text', text: 'Save draft' });
    const button = await page.$('#save');
    expect((await button?.evaluate(FINGERPRINT_FUNCTION))?.tag).toBe('button');
    expect(await page.evaluate('"__operatorPage" in globalThis')).toBe(false);
  });

  it('turn a link that would open a new tab into a navigation of the page itself', async () => {
    const pagesBefore = (await browser.pages()).length;
    await Promise.all([page.waitForNavigation(), page.click('a')]);
    expect(page.url()).toBe(`${ORIGIN}/next`);
    expect(await browser.pages()).toHaveLength(pagesBefore);
  });

  it('turn window.open() into a navigation of the page itself', async () => {
    const pagesBefore = (await browser.pages()).length;
    const [, opened] = await Promise.all([page.waitForNavigation(), page.evaluate('window.open("/next")')]);
    expect(opened).toBeNull();
    expect(page.url()).toBe(`${ORIGIN}/next`);
    expect(await browser.pages()).toHaveLength(pagesBefore);
  });
});
