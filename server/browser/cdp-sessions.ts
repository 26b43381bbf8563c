import type { Browser, CDPSession, Target } from 'puppeteer-core';

/**
 * The last session attach started on each browser; never rejects, so the next one always
 * follows it.
 */
const lastAttach = new WeakMap<Browser, Promise<unknown>>();

/**
 * A DevTools session of the service's own on `target`; the one way the browser layer
 * opens one (puppeteer's `createCDPSession`, one attach at a time per browser).
 *
 * puppeteer 24 tells a session it asked for from one Chrome attached by itself by the
 * target's id, noted while its attach is in flight and dropped when the attach answers.
 * With two attaches to one target in flight, the first answer drops the id before the
 * second session's attach event arrives: puppeteer takes that session for the target's
 * own, and once it is detached it forgets the target. The page then leaves
 * `context.pages()`, and its navigations no longer reach 'targetchanged' (a browserless
 * device lost the localStorage of the site it had visited: device-state.ts learns the
 * origins from those events). Attaches take a few milliseconds; in turn they cost nothing
 * that matters.
 */
export function openCdpSession(target: Target): Promise<CDPSession> {
  const browser = target.browser();
  const attached = (lastAttach.get(browser) ?? Promise.resolve()).then(() => target.createCDPSession());
  lastAttach.set(browser, attached.catch(() => undefined));
  return attached;
}
