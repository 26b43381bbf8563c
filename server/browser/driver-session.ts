// The page driver's own DevTools session on its page: commands sent raw, into whatever
// document is there (puppeteer's evaluate waits for a navigation under way to give it a
// new document), and the main frame's navigation requests.
//
// Whether an action asked the page's main frame to navigate is known as soon as the action
// ended instead of after a wait. A click on a link, a form's submit or a script's
// `location.href = ...` asks during the action itself; the page's DevTools agent tells it
// (Page.frameRequestedNavigation) before it answers any later command of the same
// session, so one round trip after the action tells whether one was asked (checked under
// load: 180 clicks of links, submits and scripted navigations, every one told first). A
// fixed wait for a request to show up (300 ms) would be most of a click that navigates
// nowhere.
import type { CDPSession, Page, Protocol } from 'puppeteer-core';
import { openCdpSession } from './cdp-sessions.js';

/** A session of the driver's own on its page, opened once with the driver. */
export class DriverSession {
  readonly #listeners = new Set<() => void>();

  private constructor(
    private readonly session: CDPSession,
    private readonly mainFrameId: string,
  ) {
    session.on('Page.frameRequestedNavigation', (event: Protocol.Page.FrameRequestedNavigationEvent) => {
      if (event.frameId !== this.mainFrameId) return;
      for (const listener of this.#listeners) listener();
    });
  }

  static async open(page: Page): Promise<DriverSession> {
    const session = await openCdpSession(page.target());
    await session.send('Page.enable');
    // The main frame keeps its id across its navigations, cross-site ones included.
    const { frameTree } = await session.send('Page.getFrameTree');
    return new DriverSession(session, frameTree.frame.id);
  }

  /** Calls `listener` on each navigation the main frame is asked for, until the returned function is called. */
  onRequested(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Resolves once the page answered a trivial command (an error is an answer too): every
   * navigation asked before this call has then been told to the listeners. A page stuck
   * in a script answers nothing: callers bound the wait.
   */
  async caughtUp(): Promise<void> {
    await this.session.send('Runtime.evaluate', { expression: '0' }).catch(() => undefined);
  }
}
