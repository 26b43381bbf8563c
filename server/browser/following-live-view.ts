import type { BrowserContext, Page, Target } from 'puppeteer-core';
import { openLiveView } from './live-view.js';
import { ActionError, type LiveFrame, type LiveInput, type LiveView } from './types.js';

/**
 * A live view of the page of `context` opened last and still open: what a CDP client
 * drives (Puppeteer's `newPage()`, Playwright's `context.newPage()` open a page of their
 * own beside the agent's). It moves to each page that opens, and back to the newest one
 * left when the page it shows closes (pages in the order the browser reported them); frames come from one screencast at a time
 * (live-view.ts). Without any open page it shows nothing until one opens.
 */
export async function openFollowingLiveView(context: BrowserContext): Promise<LiveView> {
  const view = new FollowingLiveView(context);
  await view.start();
  return view;
}

interface Followed {
  page: Page;
  view: LiveView;
}

class FollowingLiveView implements LiveView {
  private readonly listeners = new Set<(frame: LiveFrame) => void>();
  private latestFrame: LiveFrame | null = null;
  private current: Followed | null = null;
  /** Moves happen one at a time, in the order the browser announced them. */
  private moving: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;

  private readonly onTargetCreated = (target: Target) => {
    if (target.type() === 'page') this.moveTo(() => target.page());
  };

  private readonly onTargetDestroyed = (target: Target) => {
    if (this.current !== null && this.current.page.target() === target) this.moveTo(() => this.newestOpenPage(target));
  };

  /** A page that navigated while not shown: shown if it is the newest (a move that failed when it opened is tried again). */
  private readonly onTargetChanged = (target: Target) => {
    if (target.type() === 'page' && this.current?.page.target() !== target) this.moveTo(() => this.newestOpenPage(null));
  };

  constructor(private readonly context: BrowserContext) {}

  async start(): Promise<void> {
    this.context.on('targetcreated', this.onTargetCreated);
    this.context.on('targetdestroyed', this.onTargetDestroyed);
    this.context.on('targetchanged', this.onTargetChanged);
    this.moveTo(() => this.newestOpenPage(null));
    await this.moving;
  }

  onFrame(listener: (frame: LiveFrame) => void): () => void {
    if (this.closing !== null) return () => undefined;
    this.listeners.add(listener);
    if (this.latestFrame !== null) listener(this.latestFrame);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async input(event: LiveInput): Promise<void> {
    if (this.current === null) throw new ActionError('browser_gone', 'no page is open');
    await this.current.view.input(event);
  }

  async repaint(): Promise<void> {
    await this.current?.view.repaint();
  }

  /** Nobody watches it live: its frames stay sized for the recording. */
  async setAudience(): Promise<void> {}

  /** Never: it moves to the context's next page itself when the one it shows goes. */
  onEnded(): void {}

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.context.off('targetcreated', this.onTargetCreated);
      this.context.off('targetdestroyed', this.onTargetDestroyed);
      this.context.off('targetchanged', this.onTargetChanged);
      this.listeners.clear();
      await this.moving;
      await this.current?.view.close();
      this.current = null;
    })();
    return this.closing;
  }

  /** The last of the context's open pages but `leaving` (the target that just closed). */
  private async newestOpenPage(leaving: Target | null): Promise<Page | null> {
    const pages = await this.context.pages();
    return pages.filter((page) => !page.isClosed() && page.target() !== leaving).at(-1) ?? null;
  }

  private moveTo(next: () => Promise<Page | null>): void {
    this.moving = this.moving.then(async () => {
      if (this.closing !== null) return;
      const page = await next().catch(() => null);
      if (this.closing !== null || (page !== null && page === this.current?.page)) return;
      const previous = this.current;
      if (page === null || page.isClosed()) {
        // Nothing left to show; the video keeps the last frame until a page opens.
        if (previous !== null && previous.page.isClosed()) {
          this.current = null;
          await previous.view.close();
        }
        return;
      }
      let view: LiveView;
      try {
        // Its frames are only recorded (a CDP connection's recording).
        view = await openLiveView(page, 'recording');
      } catch {
        // The page closed before its screencast started; the next event moves on.
        return;
      }
      if (this.closing !== null) return void (await view.close());
      this.current = { page, view };
      view.onFrame((frame) => this.publish(frame));
      await previous?.view.close();
    });
  }

  private publish(frame: LiveFrame): void {
    this.latestFrame = frame;
    for (const listener of this.listeners) {
      try {
        listener(frame);
      } catch {
        // One failing listener must not starve the others, nor throw into puppeteer's dispatch.
      }
    }
  }
}
