import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHROMIUM_FLAGS } from './local-provider.js';
import { PuppeteerPageDriver } from './page-driver.js';
import { launchChromiumAsTheService, makeTempDir, startPageServer, type PageServer } from '../../test/support/browser-fixtures.js';
import type { PageObservation } from './types.js';

// Whether a cross-site iframe runs out of process depends on site isolation, which
// deployments may switch either way; every frame test runs under both.
const ISOLATION_MODES = [
  { mode: 'site-per-process', flag: '--site-per-process', outOfProcess: true },
  { mode: 'no site isolation', flag: '--disable-site-isolation-trials', outOfProcess: false },
];

let server: PageServer;

beforeAll(async () => {
  server = await startPageServer();
});

afterAll(async () => {
  await server?.close();
});

describe.each(ISOLATION_MODES)('iframes with $mode', ({ flag, outOfProcess }) => {
  let browser: Browser;
  let profile: Awaited<ReturnType<typeof makeTempDir>>;
  let page: Page;
  let driver: PuppeteerPageDriver;

  beforeAll(async () => {
    profile = await makeTempDir('frames-');
    browser = await launchChromiumAsTheService(profile.dir, [...CHROMIUM_FLAGS, flag]);
    page = await browser.newPage();
    driver = await PuppeteerPageDriver.create(page, () => browser.connected, null);
  });

  afterAll(async () => {
    await browser?.close();
    await profile?.remove();
  });

  beforeEach(async () => {
    await driver.setAllowedDomains(null);
  });

  /** Text of an element in the payment frame, read around the driver. */
  async function paymentFrameText(selector: string): Promise<string> {
    const frame = page.frames().find((candidate) => candidate.url().endsWith('/frame-form'));
    if (frame === undefined) throw new Error('the payment frame is not loaded');
    return String(await frame.evaluate(`document.querySelector(${JSON.stringify(selector)}).textContent`));
  }

  async function observeWithPaymentFrame(): Promise<PageObservation> {
    await driver.waitForText('Card number', 5_000);
    return driver.observe();
  }

  for (const [origin, pathname] of [
    ['same-origin', '/same-origin-frame'],
    ['cross-origin', '/cross-origin-frame'],
  ] as const) {
    describe(`a ${origin} iframe`, () => {
      beforeEach(async () => {
        await driver.navigate(server.url(pathname));
      });

      if (origin === 'cross-origin') {
        it(`runs ${outOfProcess ? 'out of' : 'in'} process`, async () => {
          await driver.waitForText('Card number', 5_000);
          const session = await page.createCDPSession();
          try {
            const { targetInfos } = await session.send('Target.getTargets');
            const frameTargets = targetInfos.filter((info) => info.type === 'iframe');
            expect(frameTargets.map((info) => new URL(info.url).pathname)).toEqual(outOfProcess ? ['/frame-form'] : []);
          } finally {
            await session.detach();
          }
        });
      }

      it('is observed with refs unique across frames', async () => {
        const { elements } = await observeWithPaymentFrame();
        const byName = new Map(elements.map((element) => [element.name, element]));
        expect(byName.get('Main note')).toMatchObject({ role: 'textbox', tag: 'input' });
        expect(byName.get('Pay with PayPal later')).toMatchObject({ role: 'link' });
        expect(byName.get('Card number')).toMatchObject({ role: 'textbox', tag: 'input', value: '' });
        expect(byName.get('Pay')).toMatchObject({ role: 'button', tag: 'button' });
        expect(elements.map((element) => element.ref)).toEqual(elements.map((_element, index) => index + 1));
      });

      it('clicks by ref inside the frame', async () => {
        const { elements } = await observeWithPaymentFrame();
        await driver.click({ ref: elements.find((element) => element.name === 'Pay')?.ref ?? -1 });
        expect(await paymentFrameText('#result')).toBe('Paid with ');
      });

      it('types into fields by label in both documents and clicks the frame button by text', async () => {
        await driver.waitForText('Card number', 5_000);
        await driver.type('main text', 'Main note');
        await driver.type('4242', 'Card number');
        // The main frame only has "Pay with PayPal later"; the frame's exact "Pay" wins.
        await driver.click('Pay');
        expect(await paymentFrameText('#result')).toBe('Paid with 4242');
        const { elements } = await driver.observe();
        expect(elements.find((element) => element.name === 'Main note')?.value).toBe('main text');
        expect(elements.find((element) => element.name === 'Card number')?.value).toBe('4242');
        expect((await driver.observe()).url).toBe(server.url(pathname));
      });

      it('waits for text that appears later inside the frame and reads it by selector', async () => {
        await driver.waitForText('frame arrived late', 5_000);
        expect(await driver.textOf('#late')).toBe('Frame arrived LATE');
      });
    });
  }

  it('keeps the element limit across frames, preferring what is in view', async () => {
    await driver.navigate(server.url('/crowded-frame'));
    const { elements } = await observeWithPaymentFrame();
    expect(elements).toHaveLength(150);
    expect(elements.map((element) => element.ref)).toEqual(elements.map((_element, index) => index + 1));
    // The visible frame's elements made the cut although the main frame alone has 200.
    expect(elements.filter((element) => element.name === 'Pay')).toHaveLength(1);
    expect(elements.filter((element) => element.name === 'Card number')).toHaveLength(1);
  });

  it('ignores a frame whose iframe is hidden', async () => {
    await driver.navigate(server.url('/hidden-frame'));
    // The hidden frame is fully loaded, late text included, before the driver looks.
    await expect.poll(() => paymentFrameText('#late').catch(() => ''), { timeout: 5_000 }).toBe('Frame arrived LATE');
    expect((await driver.observe()).elements).toEqual([]);
    await expect(driver.click('Pay')).rejects.toMatchObject({ code: 'target_not_found' });
    await expect(driver.waitForText('Frame arrived', 300)).rejects.toMatchObject({ code: 'timeout' });
  });

  it('leaves a frame blocked by the allow-list unloaded and out of the observation', async () => {
    await driver.setAllowedDomains(['localhost']);
    server.requests.length = 0;
    await driver.navigate(server.url('/cross-origin-frame'));
    await driver.waitForText('Main note', 5_000);
    const { elements } = await driver.observe();
    expect(elements.map((element) => element.name).sort()).toEqual(['Main note', 'Pay with PayPal later']);
    expect(server.requests.some((line) => line.includes('/frame-form'))).toBe(false);
    // The iframe now shows Chromium's error page, whose text is not the site's.
    await expect
      .poll(() => page.frames().some((frame) => frame.url().startsWith('chrome-error:')), { timeout: 5_000 })
      .toBe(true);
    await expect(driver.waitForText('blocked', 300)).rejects.toMatchObject({ code: 'timeout' });
  });
});
