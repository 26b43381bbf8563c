import type { CDPSession, Page, Protocol } from 'puppeteer-core';
import { openCdpSession } from './cdp-sessions.js';
import { isKeyName, typeText } from './keyboard-keys.js';
import { ActionError, InvalidLiveInputError, type LiveFrame, type LiveInput, type LiveView, type ScreencastAudience } from './types.js';

const JPEG_QUALITY = 60;

/**
 * Chromium encodes a JPEG of the viewport on every repaint it screencasts, and the bytes
 * cross the DevTools connection the agent's commands use: a recording alone (a video of a
 * few frames per second, the steps' pictures) gets frames of about a third of the pixels
 * of a person's. `everyNthFrame` stays 1 for both: a change on a still page usually makes a
 * single frame, and skipping frames could withhold exactly that one (a step's effect, a
 * click's answer).
 */
const SCREENCAST_OPTIONS: Record<ScreencastAudience, Protocol.Page.StartScreencastRequest> = {
  people: { format: 'jpeg', quality: JPEG_QUALITY, maxWidth: 1280, maxHeight: 1280, everyNthFrame: 1 },
  recording: { format: 'jpeg', quality: 50, maxWidth: 800, maxHeight: 800, everyNthFrame: 1 },
};

/**
 * Chromium sends screencast frames as the compositor produces them, and nothing
 * guarantees one for a page that does not repaint; past this delay the view takes a
 * screenshot so a viewer is never left without a picture. A repaint waits this long at
 * most for its frame.
 */
const FIRST_FRAME_WAIT_MS = 300;

const VIEWPORT_SIZE_EXPRESSION = '({ width: innerWidth, height: innerHeight })';

/**
 * Opens a live view of `page` on its own CDP session, so several views and the agent's
 * driver can share the page without disturbing each other; its frames sized for `audience`.
 */
export async function openLiveView(page: Page, audience: ScreencastAudience): Promise<LiveView> {
  let session: CDPSession;
  try {
    session = await openCdpSession(page.target());
  } catch {
    throw browserGone();
  }
  const view = new ScreencastLiveView(page, session, audience);
  try {
    await view.start();
  } catch {
    await view.close();
    throw browserGone();
  }
  return view;
}

class ScreencastLiveView implements LiveView {
  private readonly listeners = new Set<(frame: LiveFrame) => void>();
  private readonly endedListeners = new Set<() => void>();
  private latestFrame: LiveFrame | null = null;
  private firstFrameTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | null = null;
  /** Restarts of the screencast (audience changes, repaints), one at a time. */
  private restarts: Promise<void> = Promise.resolve();

  constructor(
    private readonly page: Page,
    private readonly session: CDPSession,
    private audience: ScreencastAudience,
  ) {}

  async start(): Promise<void> {
    // The page closed (the site's window.close(), a replacement) or its renderer crashed
    // (puppeteer's page 'error'): told once, unless this view was closed first.
    const ended = () => {
      if (this.closing !== null) return;
      const listeners = [...this.endedListeners];
      this.endedListeners.clear();
      for (const listener of listeners) listener();
    };
    this.page.once('close', ended);
    this.page.once('error', ended);
    this.session.on('Page.screencastFrame', (event) => this.onScreencastFrame(event));
    await this.session.send('Page.startScreencast', SCREENCAST_OPTIONS[this.audience]);
    this.firstFrameTimer = setTimeout(() => void this.captureFrameIfNoneArrived(null), FIRST_FRAME_WAIT_MS);
  }

  /**
   * A screencast's options are fixed while it runs: it restarts with the new ones. A
   * restart's first frame takes a frame's drawing and encoding (repaint()), so a person who
   * just came is sent a full-size picture of the page as it is at once, unless that frame
   * came first.
   */
  setAudience(audience: ScreencastAudience): Promise<void> {
    this.restarts = this.restarts.then(async () => {
      if (this.audience === audience || this.closing !== null) return;
      this.audience = audience;
      try {
        await this.session.send('Page.stopScreencast');
        await this.session.send('Page.startScreencast', SCREENCAST_OPTIONS[audience]);
      } catch {
        return; // the page is gone, which input() reports to whoever uses the view
      }
      if (audience === 'people') await this.captureFrameIfNoneArrived(this.latestFrame);
    });
    return this.restarts;
  }

  onFrame(listener: (frame: LiveFrame) => void): () => void {
    if (this.closing !== null) return () => undefined;
    this.listeners.add(listener);
    if (this.latestFrame !== null) listener(this.latestFrame);
    return () => {
      this.listeners.delete(listener);
    };
  }

  onEnded(listener: () => void): void {
    if (this.page.isClosed()) listener();
    else this.endedListeners.add(listener);
  }

  /**
   * Restarts the screencast, whose start draws the page and sends that frame (20 to 30 ms
   * on a quiet 2-core host): the cost of one screencast frame. A screenshot, the other way
   * to make the compositor draw, encodes the whole viewport, which took 100 to 160 ms of a
   * core on a 2-core EPYC and slowed the action after it (a submit to the next document
   * 125 to 155 ms, against 85 to 100 after a restart). Resolves once the restart's frame is
   * published (FIRST_FRAME_WAIT_MS at most): a caller that goes on earlier could act on the
   * page before that frame is drawn, and take it for a picture of its action.
   */
  repaint(): Promise<void> {
    this.restarts = this.restarts.then(async () => {
      if (this.closing !== null) return;
      try {
        await this.session.send('Page.stopScreencast');
        // Chromium stamps a frame as it captures it: one of the stopped screencast still on its way was captured before now.
        const drawn = this.frameStampedAfter(Date.now(), FIRST_FRAME_WAIT_MS);
        await this.session.send('Page.startScreencast', SCREENCAST_OPTIONS[this.audience]);
        await drawn;
      } catch {
        // A page navigating or gone draws its next frame by itself, or never: nothing to force.
      }
    });
    return this.restarts;
  }

  async input(event: LiveInput): Promise<void> {
    try {
      await this.dispatch(event);
    } catch (error) {
      if (error instanceof InvalidLiveInputError) throw error;
      throw browserGone();
    }
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async dispatch(event: LiveInput): Promise<void> {
    const { mouse, keyboard } = this.page;
    switch (event.kind) {
      case 'click':
        await mouse.click(event.x, event.y, { button: event.button });
        return;
      case 'move':
        await mouse.move(event.x, event.y);
        return;
      case 'scroll':
        // Wheel events go to whatever is under the pointer, so the pointer goes there first.
        await mouse.move(event.x, event.y);
        await mouse.wheel({ deltaX: event.dx, deltaY: event.dy });
        return;
      case 'key':
        if (!isKeyName(event.key)) throw new InvalidLiveInputError(`"${event.key}" is not a key name`);
        await keyboard.press(event.key);
        return;
      case 'text':
        await typeText(keyboard, event.text);
        return;
    }
  }

  private onScreencastFrame(event: Protocol.Page.ScreencastFrameEvent): void {
    // Chromium stops sending frames while a couple of them are unacknowledged.
    void this.session.send('Page.screencastFrameAck', { sessionId: event.sessionId }).catch(() => undefined);
    this.publish({
      data: event.data,
      width: Math.round(event.metadata.deviceWidth),
      height: Math.round(event.metadata.deviceHeight),
      // Chromium's swap time is in seconds since the epoch; the arrival is later, a bound.
      swappedAt: event.metadata.timestamp === undefined ? Date.now() : event.metadata.timestamp * 1000,
    });
  }

  /** Resolves once a frame stamped after `at` is published, or `ms` passed. */
  private frameStampedAfter(at: number, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve();
      };
      const listener = (frame: LiveFrame) => {
        if (frame.swappedAt > at) done();
      };
      const timer = setTimeout(done, ms);
      this.listeners.add(listener);
    });
  }

  /** Publishes a screenshot unless a frame other than `previous` arrived meanwhile. */
  private async captureFrameIfNoneArrived(previous: LiveFrame | null): Promise<void> {
    if (this.latestFrame !== previous || this.closing !== null) return;
    const requestedAt = Date.now();
    try {
      const [screenshot, viewport] = await Promise.all([
        this.session.send('Page.captureScreenshot', { format: 'jpeg', quality: JPEG_QUALITY }),
        // The screenshot covers the whole viewport, scrollbars included, as innerWidth
        // does; Page.getLayoutMetrics reports the viewport without its scrollbars.
        this.session.send('Runtime.evaluate', { expression: VIEWPORT_SIZE_EXPRESSION, returnByValue: true }),
      ]);
      // A screencast frame that arrived meanwhile is newer than the screenshot.
      if (this.latestFrame !== previous) return;
      const size = viewport.result.value as { width: number; height: number };
      this.publish({ data: screenshot.data, width: Math.round(size.width), height: Math.round(size.height), swappedAt: requestedAt });
    } catch {
      // The page is navigating, and its new document paints a screencast frame, or it is
      // gone, which input() reports to whoever uses the view.
    }
  }

  private publish(frame: LiveFrame): void {
    this.latestFrame = frame;
    for (const listener of this.listeners) {
      try {
        listener(frame);
      } catch {
        // One failing viewer must not starve the others, nor throw into puppeteer's
        // protocol message dispatch, which runs this.
      }
    }
  }

  private async stop(): Promise<void> {
    clearTimeout(this.firstFrameTimer);
    // A screenshot taken for the first frame may still land after this.
    this.listeners.clear();
    // The page or the whole browser may already be gone, which stops the screencast too.
    await this.session.send('Page.stopScreencast').catch(() => undefined);
    await this.session.detach().catch(() => undefined);
  }
}

function browserGone(): ActionError {
  return new ActionError('browser_gone', 'the browser is no longer running');
}
