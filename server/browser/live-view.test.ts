import path from 'node:path';
import puppeteer, { type CDPSession } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { openLiveView } from './live-view.js';
import { LocalBrowserProvider } from './local-provider.js';
import { BROWSER_ISOLATION, CHROMIUM_PATH, makeTempDir, startPageServer, startRemoteChromium, type PageServer } from '../../test/support/browser-fixtures.js';
import {
  ActionError,
  InvalidLiveInputError,
  type BrowserHandle,
  type LiveFrame,
  type LiveView,
  type PageDriver,
} from './types.js';

// One Chromium serves every test but the two that need a browser of their own; each
// test starts from a fresh navigation to /live and closes the views it opened.
let server: PageServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let provider: LocalBrowserProvider;
let handle: BrowserHandle;
let driver: PageDriver;
const openViews: LiveView[] = [];

/** A frame must reach a viewer within this, even from a page that never repaints. */
const FIRST_FRAME_DEADLINE_MS = 1_000;

// Positions of the /live page's targets, in viewport CSS pixels.
const BIG_BUTTON = { x: 200, y: 150 };
const LIVE_FIELD = { x: 500, y: 120 };

beforeAll(async () => {
  server = await startPageServer();
  temp = await makeTempDir('live-view-');
  provider = new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir: temp.dir, ...BROWSER_ISOLATION, egress: null });
  handle = await provider.launch({ deviceId: 'live-device', orgId: 'org-1' });
  driver = await handle.page();
});

afterAll(async () => {
  await provider?.shutdown();
  await server?.close();
  await temp?.remove();
});

beforeEach(async () => {
  await driver.navigate(server.url('/live'));
});

afterEach(async () => {
  await Promise.all(openViews.splice(0).map((view) => view.close()));
});

async function openView(): Promise<LiveView> {
  const view = await handle.liveView('people');
  openViews.push(view);
  return view;
}

/** Collects a view's frames; onFrame may call a listener before it returns the unsubscribe function. */
function recordFrames(view: LiveView): { frames: LiveFrame[]; stop: () => void } {
  const frames: LiveFrame[] = [];
  const stop = view.onFrame((frame) => frames.push(frame));
  return { frames, stop };
}

async function waitForFrames(frames: LiveFrame[], count: number): Promise<void> {
  await expect
    .poll(() => frames.length, { timeout: FIRST_FRAME_DEADLINE_MS, interval: 20 })
    .toBeGreaterThanOrEqual(count);
}

function isJpeg(frame: LiveFrame): boolean {
  return Buffer.from(frame.data, 'base64').subarray(0, 2).equals(Buffer.from([0xff, 0xd8]));
}

/** The JPEG's own width in pixels (its start-of-frame segment), whatever viewport it shows. */
function jpegWidth(frame: LiveFrame): number {
  const bytes = Buffer.from(frame.data, 'base64');
  for (let at = 2; at + 9 < bytes.length; at += 2 + bytes.readUInt16BE(at + 2)) {
    if (bytes[at] !== 0xff) break;
    if (bytes[at + 1] === 0xc0 || bytes[at + 1] === 0xc2) return bytes.readUInt16BE(at + 7);
  }
  throw new Error('no JPEG frame header');
}

async function viewportSize(): Promise<{ width: number; height: number }> {
  const [width, height] = (await driver.textOf('#viewport')).split('x').map(Number);
  return { width: width ?? NaN, height: height ?? NaN };
}

async function expectText(selector: string, text: string): Promise<void> {
  await expect.poll(() => driver.textOf(selector), { timeout: 2_000, interval: 20 }).toBe(text);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

describe('frames', () => {
  it('streams JPEG frames sized to the viewport in CSS pixels, the first within a second on a static page', async () => {
    const opened = Date.now();
    const { frames } = recordFrames(await openView());
    await waitForFrames(frames, 1);
    expect(Date.now() - opened).toBeLessThan(FIRST_FRAME_DEADLINE_MS);
    const frame = frames[0]!;
    expect(isJpeg(frame)).toBe(true);
    expect({ width: frame.width, height: frame.height }).toEqual(await viewportSize());
  });

  it('sizes frames for a recording alone, and hands people who come a full-size picture at once', async () => {
    const view = await handle.liveView('recording');
    openViews.push(view);
    const { frames } = recordFrames(view);
    await waitForFrames(frames, 1);
    // The viewport is 1280 wide; a recording gets at most 800.
    expect(jpegWidth(frames.at(-1)!)).toBeLessThanOrEqual(800);
    expect({ width: frames.at(-1)!.width, height: frames.at(-1)!.height }).toEqual(await viewportSize());
    const before = frames.length;
    await view.setAudience('people');
    await waitForFrames(frames, before + 1);
    expect(jpegWidth(frames.at(-1)!)).toBe((await viewportSize()).width);
  });

  it('hands a listener registered later the latest frame at once, then the frames after it', async () => {
    const view = await openView();
    const { frames: early } = recordFrames(view);
    await waitForFrames(early, 1);
    const { frames: late } = recordFrames(view);
    expect(late).toEqual([early.at(-1)]);

    await driver.click('Big button');
    await waitForFrames(late, 2);
    expect(late.at(-1)).toBe(early.at(-1));
  });

  it('keeps sending frames while the page keeps changing', async () => {
    const view = await openView();
    const { frames } = recordFrames(view);
    await waitForFrames(frames, 1);
    await view.input({ kind: 'click', x: LIVE_FIELD.x, y: LIVE_FIELD.y, button: 'left' });
    // Chromium holds back frames once a few are unacknowledged, so a stream that stalls
    // after its first frames fails here.
    for (const text of ['a', 'b', 'c', 'd', 'e']) {
      const seen = frames.length;
      await view.input({ kind: 'text', text });
      await waitForFrames(frames, seen + 1);
    }
    expect(frames.every(isJpeg)).toBe(true);
  });

  it('keeps streaming across a navigation to another site', async () => {
    const { frames } = recordFrames(await openView());
    await waitForFrames(frames, 1);
    await driver.navigate(server.url('/next', '127.0.0.1'));
    const seen = frames.length;
    await driver.navigate(server.url('/live', '127.0.0.1'));
    await waitForFrames(frames, seen + 1);
  });

  it('gives every one of several views on the page frames, and stops calling listeners once closed', async () => {
    const first = await openView();
    const second = await openView();
    const { frames: firstFrames } = recordFrames(first);
    const { frames: secondFrames } = recordFrames(second);
    await waitForFrames(firstFrames, 1);
    await waitForFrames(secondFrames, 1);

    await first.close();
    const firstCount = firstFrames.length;
    const secondCount = secondFrames.length;
    await driver.click('Big button');
    // The view left open proves the page painted new frames after the close.
    await waitForFrames(secondFrames, secondCount + 1);
    expect(firstFrames).toHaveLength(firstCount);
    recordFrames(first);
    expect(firstFrames).toHaveLength(firstCount);
    await expect(first.close()).resolves.toBeUndefined();
  });

  it('has sent a frame drawn after repaint() was asked by the time it resolves, from a page that stands still', async () => {
    const view = await openView();
    const { frames } = recordFrames(view);
    await waitForFrames(frames, 1);
    // Still: no frame for 300 ms, so none would come by itself.
    let seen = frames.length;
    await expect
      .poll(
        async () => {
          const before = frames.length;
          await new Promise((resolve) => setTimeout(resolve, 300));
          seen = frames.length;
          return seen === before;
        },
        { timeout: 5_000, interval: 0 },
      )
      .toBe(true);
    const askedAt = Date.now();
    await view.repaint();
    // Already here: a caller that goes on may act on the page next (FrameTimeline.shown).
    expect(frames.slice(seen).some((frame) => frame.swappedAt >= askedAt)).toBe(true);
  });

  it('falls back to a screenshot when the screencast sends nothing', async () => {
    const remote = await startRemoteChromium(path.join(temp.dir, 'silent-screencast'));
    const browser = await puppeteer.connect({
      browserWSEndpoint: remote.webSocketUrl,
      defaultViewport: { width: 800, height: 600 },
    });
    try {
      const page = await browser.newPage();
      await page.goto(server.url('/live'));
      const target = page.target();
      const createSession = target.createCDPSession.bind(target);
      vi.spyOn(target, 'createCDPSession').mockImplementation(async () => silenceScreencast(await createSession()));
      const view = await openLiveView(page, 'people');
      const { frames } = recordFrames(view);
      await waitForFrames(frames, 1);
      expect(isJpeg(frames[0]!)).toBe(true);
      expect({ width: frames[0]!.width, height: frames[0]!.height }).toEqual({ width: 800, height: 600 });
      await view.close();
    } finally {
      await browser.disconnect();
      await remote.stop();
    }
  });
});

/** A session on which Page.startScreencast succeeds without Chromium starting one. */
function silenceScreencast(session: CDPSession): CDPSession {
  const send = session.send.bind(session) as (method: string, ...rest: unknown[]) => Promise<unknown>;
  const silentSend = (method: string, ...rest: unknown[]): Promise<unknown> =>
    method === 'Page.startScreencast' ? Promise.resolve({}) : send(method, ...rest);
  session.send = silentSend as CDPSession['send'];
  return session;
}

describe('input', () => {
  it('clicks at viewport coordinates with the given button', async () => {
    const view = await openView();
    await view.input({ kind: 'click', x: BIG_BUTTON.x, y: BIG_BUTTON.y, button: 'left' });
    await expectText('#clicked', 'Big button clicked');
    expect(await driver.textOf('#mouse-button')).toBe('0');
    await view.input({ kind: 'click', x: BIG_BUTTON.x, y: BIG_BUTTON.y, button: 'right' });
    await expectText('#mouse-button', '2');
  });

  it('types text into the focused field and presses keys by name', async () => {
    const view = await openView();
    await view.input({ kind: 'move', x: LIVE_FIELD.x, y: LIVE_FIELD.y });
    await view.input({ kind: 'click', x: LIVE_FIELD.x, y: LIVE_FIELD.y, button: 'left' });
    await view.input({ kind: 'text', text: 'hello live' });
    await expectText('#typed', 'hello live');
    await view.input({ kind: 'key', key: 'Enter' });
    await expectText('#last-key', 'Enter');
    await view.input({ kind: 'key', key: 'Tab' });
    await expectText('#focused', 'next field');
  });

  it('scrolls the page under the pointer', async () => {
    const view = await openView();
    await view.input({ kind: 'scroll', x: 640, y: 400, dx: 0, dy: 500 });
    await expect
      .poll(async () => Number(await driver.textOf('#scroll-y')), { timeout: 2_000, interval: 20 })
      .toBeGreaterThan(0);
  });

  it('rejects an unknown key name with InvalidLiveInputError and sends nothing', async () => {
    const view = await openView();
    await view.input({ kind: 'click', x: LIVE_FIELD.x, y: LIVE_FIELD.y, button: 'left' });
    const error = await rejection(view.input({ kind: 'key', key: 'NotAKey' }));
    expect(error).toBeInstanceOf(InvalidLiveInputError);
    expect(await driver.textOf('#last-key')).toBe('none');
    expect(await driver.textOf('#typed')).toBe('');
    // The keyboard is not left in a half-pressed state.
    await view.input({ kind: 'key', key: 'a' });
    await expectText('#typed', 'a');
  });
});

describe('a view of a browser that is gone', () => {
  it('rejects input with browser_gone, closes quietly, and no new view opens', async () => {
    const goneHandle = await provider.launch({ deviceId: 'live-gone', orgId: 'org-1' });
    const view = await goneHandle.liveView('people');
    await goneHandle.close();

    const error = await rejection(view.input({ kind: 'click', x: 10, y: 10, button: 'left' }));
    expect(error).toBeInstanceOf(ActionError);
    expect((error as ActionError).code).toBe('browser_gone');
    await expect(view.close()).resolves.toBeUndefined();

    const reopened = await rejection(goneHandle.liveView('people'));
    expect(reopened).toBeInstanceOf(ActionError);
    expect((reopened as ActionError).code).toBe('browser_gone');
  });
});
