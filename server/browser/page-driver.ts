import {
  ConnectionClosedError,
  InterceptResolutionAction,
  TimeoutError,
  type ElementHandle,
  type HTTPRequest,
  type KeyInput,
  type Page,
  type Target,
} from 'puppeteer-core';
import { DomainAllowList } from './domain-allowlist.js';
import {
  TEXTS_OF_SCRIPT,
  FINGERPRINT_FUNCTION,
  FIND_CLICK_TARGET_SCRIPT,
  LOCATE_FINGERPRINT_SCRIPT,
  FIND_FIELD_SCRIPT,
  AGENT_PAGE_SCRIPT,
  SCROLL_SCRIPT,
  PREPARE_FIELD_FUNCTION,
  SELECT_OPTION_FUNCTION,
} from './in-page-scripts.js';
import { MAX_OBSERVED_ELEMENTS, REPLAY_ATTRIBUTE } from './in-page/contract.js';
import { clickElement } from './guarded-click.js';
import { DriverSession } from './driver-session.js';
import { typeText } from './keyboard-keys.js';
import { openLiveView } from './live-view.js';
import { downloadByClick } from './page-download.js';
import {
  elementByRef,
  findInFrames,
  framesShowText,
  observeFrames,
  textInFrames,
  type RefTarget,
} from './page-frames.js';
import {
  ActionError,
  type ActionErrorCode,
  type ActionTarget,
  type DownloadedFile,
  type DownloadLimits,
  type EffectGate,
  type EgressGate,
  type LiveView,
  type LocatedTarget,
  type ScreencastAudience,
  type TargetFingerprint,
  type PageDriver,
  type PageObservation,
} from './types.js';

/** Limit for navigate() and for a navigation an action triggered. */
const NAVIGATION_TIMEOUT_MS = 30_000;
/**
 * How long after a click or key press the page may take to tell whether it asked for a
 * navigation (driver-session.ts): a page stuck in a script tells nothing.
 */
const NAVIGATION_REQUEST_WAIT_MS = 300;
/**
 * How long a target named by text or selector may take to appear: a page that renders its
 * form with JavaScript after it loaded (a single-page app) shows it a moment later.
 */
const TARGET_APPEAR_MS = 2_000;
const TARGET_POLL_MS = 100;
/** Longest closePage() waits for a crashed or hung page's tab to close before a new page is opened beside it. */
const CLOSE_CRASHED_MS = 5_000;
/** Longest untilPainted() waits for the page's next frame to be painted. */
const PAINT_SETTLE_MS = 500;
/** The gate of an action nobody holds. */
const NO_GATE: EffectGate = async () => undefined;
/**
 * Resolves in the task after the next animation frame: the frame's rendering (style,
 * layout, paint, the commit to the compositor) runs between its animation-frame callbacks
 * and that task. A string, not a function: code for the page is never compiled by tsx
 * (docs/architecture.md).
 */
const PAINTED_EXPRESSION = 'new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(true), 0)))';

const SCREENSHOT_QUALITY = 60;

/**
 * How often waitForText looks at the page again: soon at first (text that follows a
 * navigation or a click usually appears within milliseconds, and a fixed 100 ms poll made
 * every such step wait up to 100 ms more), then backing off to every 100 ms.
 */
const TEXT_POLL_FIRST_MS = 5;
const TEXT_POLL_MAX_MS = 100;

/**
 * What the agent may open by URL: network pages (judged by the egress proxy) and pages
 * that never leave the browser (inline data, a blank page). `file:`, `chrome:`,
 * `devtools:`, `view-source:` and the like reach the host or the browser's internals,
 * which no proxy sees, so they are refused before the browser is asked.
 */
const NAVIGABLE_SCHEMES = new Set(['http:', 'https:', 'data:', 'about:']);

/**
 * PageDriver over one puppeteer Page. `isBrowserAlive` reports whether the browser
 * connection behind the page still stands, so failures are classified by state.
 */
export class PuppeteerPageDriver implements PageDriver {
  private allowList: DomainAllowList | null = null;
  private allowListEntries: string[] | null = null;
  /** Set when interception blocked a main-frame navigation; actions consume it. */
  private blockedNavigationUrl: string | null = null;
  private readonly blockedNavigationListeners = new Set<() => void>();
  private readonly navigationRequestListeners = new Set<() => void>();
  /** The driver's own session on the page: raw commands, navigation requests (set by install()). */
  private session!: DriverSession;
  /**
   * The main frame's latest navigation request (the last hop of a redirect chain) whose
   * fate no action has judged yet, and the start of the action it followed: the egress
   * proxy's refusals since then are this navigation's. Judged by every action, not only by
   * the click that started it: on a loaded host a click's navigation can start after the
   * click stopped waiting for it, and the page it leaves is the proxy's refusal.
   */
  private unjudgedNavigation: { request: HTTPRequest; since: number } | null = null;
  /** When the latest action started (or the driver was made). */
  private actionStartedAt = Date.now();
  /** A navigation of the main frame that has not committed yet (waiting for its server). */
  private pendingNavigation: HTTPRequest | null = null;
  /** What the refs of the last observation point at; refs are numbered across frames. */
  private refTargets = new Map<number, RefTarget>();
  /** Marks handed out by locate(). */
  private replayMarks = 0;
  /**
   * Another tab of the page's context opened since the page was last brought in front
   * (or the driver is new): the page may be behind it, hidden, and a hidden page runs no
   * animation frames and paints nothing, so neither its effects nor its recording show.
   */
  private mayBeBehindAnotherTab = true;
  /** The paint of the last action that changed the page (untilPainted); the next action starts after it. */
  private painting: Promise<void> = Promise.resolve();
  /** When the main frame last navigated (navigatedAt()). */
  private lastNavigationAt = 0;
  /**
   * Rejects once the page's renderer crashed. A crashed page answers no command (each would
   * wait out the protocol timeout), so every action races it, and the browser handle
   * replaces the page before anything else drives it.
   */
  private readonly crashed: Promise<never>;
  private crashSeen = false;

  private constructor(
    private readonly page: Page,
    private readonly isBrowserAlive: () => boolean,
    private readonly egress: EgressGate | null,
    private readonly downloadsDir: string | null,
  ) {
    this.crashed = new Promise<never>((_resolve, reject) => {
      // puppeteer's 'error' event of a page is Inspector.targetCrashed: the renderer died.
      page.once('error', () => {
        this.crashSeen = true;
        reject(pageCrashed());
      });
    });
    // Raced by every action; nobody may be racing it when it happens.
    this.crashed.catch(() => undefined);
  }

  /**
   * `egress`: the proxy the page's browser goes through, or null where none is in front.
   * `downloadsDir`: where the browser may save downloads (in its profile); null: the
   * browser is remote and its downloads cannot be kept.
   */
  static async create(page: Page, isBrowserAlive: () => boolean, egress: EgressGate | null, downloadsDir: string | null = null): Promise<PuppeteerPageDriver> {
    const driver = new PuppeteerPageDriver(page, isBrowserAlive, egress, downloadsDir);
    await driver.install();
    return driver;
  }

  get isClosed(): boolean {
    return this.page.isClosed();
  }

  /** Its renderer crashed: the page shows nothing and answers nothing until it is closed. */
  get hasCrashed(): boolean {
    return this.crashSeen;
  }

  /**
   * Whether the page's renderer answers a trivial evaluation within `ms`: one stuck in a
   * script does not. Sent raw on the driver's session (driver-session.ts), into whatever
   * document is there: puppeteer's evaluate waits for a navigation under way to give it a
   * new document, which a slow server can take longer than `ms` to do. An error is an
   * answer too; only silence counts. A page whose navigation waits for its server answers
   * nothing meanwhile either: it is not judged (its navigation's own timeout is the limit).
   */
  async responds(ms: number): Promise<boolean> {
    if (this.pendingNavigation !== null) return true;
    const answered = this.session.caughtUp().then(() => true);
    return Promise.race([answered, delay(ms).then(() => false)]);
  }

  /** Closes the page (one that crashed or hangs, before a new one replaces it); CLOSE_CRASHED_MS at most. */
  async closePage(): Promise<void> {
    await Promise.race([this.page.close().catch(() => undefined), delay(CLOSE_CRASHED_MS)]);
  }

  /** The entries last given to setAllowedDomains(), as given. */
  get allowedDomains(): string[] | null {
    return this.allowListEntries;
  }

  private async install(): Promise<void> {
    this.page.on('request', (request) => this.onRequest(request));
    this.page.on('framenavigated', (frame) => {
      if (frame !== this.page.mainFrame()) return;
      this.pendingNavigation = null;
      this.lastNavigationAt = Date.now();
    });
    this.page.on('requestfailed', (request) => {
      if (request === this.pendingNavigation) this.pendingNavigation = null;
    });
    // Links that open tabs are retargeted in-page; anything that still opens one (for
    // example a popup opened by the browser itself) is closed, as the agent drives one
    // page and other pages would escape request interception.
    this.page.on('popup', (popup) => {
      void popup?.close().catch(() => undefined);
    });
    // A CDP client's tab, in front of this one since it opened.
    const context = this.page.browserContext();
    const onTab = (target: Target) => {
      if (target.type() === 'page' && target !== this.page.target()) this.mayBeBehindAnotherTab = true;
    };
    context.on('targetcreated', onTab);
    this.page.once('close', () => context.off('targetcreated', onTab));
    // A JavaScript dialog (alert, confirm, prompt, a page's "leave this page?") stops the
    // page until it is answered, and nobody sees it here: every command then waits,
    // forever. It is answered as the instruction that led to it meant: yes (a prompt with
    // the answer it offers).
    this.page.on('dialog', (dialog) => void dialog.accept(dialog.defaultValue()).catch(() => undefined));
    this.session = await DriverSession.open(this.page);
    await this.page.evaluateOnNewDocument(AGENT_PAGE_SCRIPT);
    await this.page.evaluate(AGENT_PAGE_SCRIPT);
  }

  async setAllowedDomains(domains: string[] | null): Promise<void> {
    // A run starts here: a navigation its page made before was no action of this run.
    this.blockedNavigationUrl = null;
    this.unjudgedNavigation = null;
    await this.run('navigation_failed', 'setting allowed domains', async () => {
      this.allowList = DomainAllowList.fromEntries(domains);
      this.allowListEntries = domains === null ? null : [...domains];
      await this.page.setRequestInterception(this.allowList !== null);
    });
  }

  async observe(options: { screenshot?: boolean; elements?: boolean } = {}): Promise<PageObservation> {
    return this.run('target_not_found', 'observing the page', async () => {
      const { elements, refTargets } =
        options.elements === false
          ? { elements: [], refTargets: new Map<number, RefTarget>() }
          : await this.evaluateAfterLoad(() => observeFrames(this.page, MAX_OBSERVED_ELEMENTS));
      this.refTargets = refTargets;
      const observation: PageObservation = {
        url: this.page.url(),
        title: await this.page.title(),
        elements,
      };
      if (options.screenshot) {
        observation.screenshot = await this.page.screenshot({
          type: 'jpeg',
          quality: SCREENSHOT_QUALITY,
          encoding: 'base64',
        });
      }
      return observation;
    });
  }

  async screenshot(): Promise<Buffer> {
    return this.run('timeout', 'taking a screenshot', async () => {
      const data = await this.page.screenshot({ type: 'jpeg', quality: SCREENSHOT_QUALITY, encoding: 'binary', optimizeForSpeed: true });
      return Buffer.from(data);
    });
  }

  painted(): Promise<void> {
    return this.painting;
  }

  navigatedAt(): number {
    return this.lastNavigationAt;
  }

  async navigate(url: string, gate: EffectGate = NO_GATE): Promise<void> {
    await this.changePage('navigation_failed', `navigating to ${url}`, async () => {
      await gate('changes');
      if (!URL.canParse(url)) {
        throw new ActionError('navigation_failed', `"${url}" is not a valid URL`);
      }
      if (!NAVIGABLE_SCHEMES.has(new URL(url).protocol)) {
        throw new ActionError('destination_blocked', `${new URL(url).protocol} pages cannot be opened`);
      }
      if (this.allowList && !this.allowList.allowsUrl(url)) {
        throw domainNotAllowed(url);
      }
      try {
        await this.page.goto(url, {
          waitUntil: 'domcontentloaded',
          timeout: NAVIGATION_TIMEOUT_MS,
        });
      } catch (error) {
        // A redirect into a blocked domain surfaces as a failed navigation; the flag set
        // by interception, or the proxy's refusal, tells it apart from other failures.
        await this.throwIfNavigationBlocked();
        throw error;
      }
      await this.throwIfNavigationBlocked();
    });
  }

  async click(target: ActionTarget, gate: EffectGate = NO_GATE): Promise<void> {
    await this.changePage('target_not_found', `clicking ${describeTarget(target)}`, async () => {
      const element = await this.resolveBehind(gate('changes'), target, 'click');
      try {
        await this.settleNavigation((navigationRequested) => clickElement(element, navigationRequested));
      } finally {
        releaseHandle(element);
      }
    });
  }

  async download(target: ActionTarget, limits: DownloadLimits, gate: EffectGate = NO_GATE): Promise<DownloadedFile> {
    return this.runInFront('download_failed', `downloading by clicking ${describeTarget(target)}`, () =>
      // A click that downloads starts a navigation that never loads a page: the click is
      // not followed by the navigation wait click() does, the download is awaited instead.
      downloadByClick(this.page, this.downloadsDir, limits, async () => {
        const element = await this.resolveBehind(gate('changes'), target, 'click');
        try {
          await clickElement(element);
        } finally {
          releaseHandle(element);
        }
      }),
    );
  }

  async type(text: string, into: ActionTarget, options: { secret?: boolean } = {}, gate: EffectGate = NO_GATE): Promise<void> {
    await this.changePage('target_not_found', `typing into ${describeTarget(into)}`, async () => {
      const field = await this.resolveBehind(gate('types'), into, 'field');
      try {
        if ((await field.evaluate(PREPARE_FIELD_FUNCTION, options.secret === true)) === 'select') {
          if (!(await field.evaluate(SELECT_OPTION_FUNCTION, text))) {
            throw new ActionError('target_not_found', `no option "${text}" in ${describeTarget(into)}`);
          }
          return;
        }
        await typeText(this.page.keyboard, text);
      } finally {
        releaseHandle(field);
      }
    });
  }

  async press(key: string, gate: EffectGate = NO_GATE): Promise<void> {
    await this.changePage('target_not_found', `pressing ${key}`, async () => {
      await gate('changes');
      const keys = splitKeyCombination(key);
      const main = keys.pop();
      if (main === undefined) throw new ActionError('target_not_found', 'no key given');
      await this.settleNavigation(async () => {
        for (const modifier of keys) await this.page.keyboard.down(modifier);
        try {
          await this.page.keyboard.press(main);
        } finally {
          for (const modifier of keys.reverse()) await this.page.keyboard.up(modifier);
        }
      });
    });
  }

  async scroll(direction: 'up' | 'down', gate: EffectGate = NO_GATE): Promise<void> {
    await this.changePage('target_not_found', `scrolling ${direction}`, async () => {
      await gate('changes');
      const sign: 1 | -1 = direction === 'down' ? 1 : -1;
      await this.page.evaluate(SCROLL_SCRIPT, { direction: sign });
    });
  }

  /**
   * Polls every frame rather than using page.waitForFunction, which watches the main
   * frame only; frames that appear while waiting are included from the next poll on.
   */
  async waitForText(text: string, timeoutMs: number, gate: EffectGate = NO_GATE): Promise<void> {
    await this.runInFront('timeout', `waiting for "${text}"`, async () => {
      await gate('watches');
      const deadline = Date.now() + timeoutMs;
      let timer: NodeJS.Timeout | undefined;
      // A page stuck in a dialog never answers, so no poll may outlast the deadline.
      const expired = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      try {
        for (let pollMs = TEXT_POLL_FIRST_MS; ; pollMs = Math.min(pollMs * 2, TEXT_POLL_MAX_MS)) {
          // The page waited on may navigate somewhere blocked meanwhile: that ends the wait.
          await this.throwIfNavigationBlocked();
          if (await Promise.race([framesShowText(this.page, text), expired])) return;
          if (!this.isAlive()) throw browserGone();
          if (Date.now() >= deadline) {
            throw new ActionError('timeout', `"${text}" did not appear within ${timeoutMs} ms`);
          }
          await delay(Math.min(pollMs, deadline - Date.now()));
        }
      } finally {
        clearTimeout(timer);
      }
    });
  }

  /** Searches open shadow roots and child frames too, main frame first. */
  async textOf(selector: string): Promise<string> {
    return this.run('target_not_found', `reading ${selector}`, async () => {
      const result = await this.evaluateAfterLoad(() => textInFrames(this.page, selector));
      switch (result.kind) {
        case 'text':
          return result.text.trim();
        case 'invalid':
          throw new ActionError('target_not_found', `"${selector}" is not a valid CSS selector`);
        case 'missing':
          throw new ActionError('target_not_found', `nothing matches "${selector}"`);
      }
    });
  }

  async textsOf(selector: string): Promise<string[]> {
    return this.run('target_not_found', `reading ${selector}`, async () => {
      const texts = await this.evaluateAfterLoad(() => this.page.mainFrame().evaluate(TEXTS_OF_SCRIPT, { selector, limit: 1_000 }));
      if (texts === null) throw new ActionError('target_not_found', `"${selector}" is not a valid CSS selector`);
      return texts;
    });
  }

  async fingerprint(target: ActionTarget, purpose: 'click' | 'field'): Promise<TargetFingerprint | null> {
    return this.run('target_not_found', `reading ${describeTarget(target)}`, async () => {
      const element = await this.resolve(target, purpose);
      try {
        return element.frame === this.page.mainFrame() ? await element.evaluate(FINGERPRINT_FUNCTION) : null;
      } finally {
        releaseHandle(element);
      }
    });
  }

  async locate(fingerprint: TargetFingerprint): Promise<LocatedTarget> {
    return this.run('target_not_found', 'finding a cached target', async () => {
      // A fresh mark each time, so a selector of an earlier search never finds this one's element.
      const marker = String((this.replayMarks += 1));
      const found = await this.evaluateAfterLoad(() => this.page.mainFrame().evaluate(LOCATE_FINGERPRINT_SCRIPT, { fingerprint, marker }));
      return found.status === 'found' ? { status: 'found', target: `[${REPLAY_ATTRIBUTE}="${marker}"]` } : found;
    });
  }

  /** A live view of this driver's page, for a human watching or taking over. */
  openLiveView(audience: ScreencastAudience): Promise<LiveView> {
    return openLiveView(this.page, audience);
  }

  private onRequest(request: HTTPRequest): void {
    if (request.isNavigationRequest() && request.frame() === this.page.mainFrame()) {
      this.unjudgedNavigation = { request, since: this.actionStartedAt };
      this.pendingNavigation = request;
      for (const listener of this.navigationRequestListeners) listener();
    }
    if (request.interceptResolutionState().action === InterceptResolutionAction.None) {
      this.resolveInterception(request);
    }
  }

  /**
   * Decides a paused request. Interception is switched with the list but not atomically,
   * so a request paused just after the list was cleared is continued, not left hanging.
   */
  private resolveInterception(request: HTTPRequest): void {
    const url = request.url();
    if (this.allowList === null || this.allowList.allowsUrl(url)) {
      void request.continue().catch(() => undefined);
      return;
    }
    if (request.isNavigationRequest() && request.frame() === this.page.mainFrame()) {
      this.blockedNavigationUrl = url;
      for (const listener of this.blockedNavigationListeners) listener();
      // A 204 answer makes Chromium keep the current document, where an aborted request
      // would replace it with an error page and lose the agent's place.
      void request.respond({ status: 204, body: '' }).catch(() => undefined);
      return;
    }
    void request.abort('blockedbyclient').catch(() => undefined);
  }

  /**
   * Fails the running action when a main-frame navigation no action reported yet was
   * stopped: by the task's allow-list (interception), or by the egress proxy (the browser
   * only shows a tunnel or proxy error; the proxy's memory of the refusal names the cause).
   * A navigation still on its way, not refused so far, is left for a later action to judge.
   */
  private async throwIfNavigationBlocked(): Promise<void> {
    const blocked = this.blockedNavigationUrl;
    if (blocked !== null) {
      this.blockedNavigationUrl = null;
      throw domainNotAllowed(blocked);
    }
    const navigation = this.unjudgedNavigation;
    if (navigation === null) return;
    const { request, since } = navigation;
    const refused = this.egress !== null && (await this.egress.refusedSince(request.url(), since));
    const answered = request.response() !== null || request.failure() !== null;
    if ((refused || answered) && this.unjudgedNavigation === navigation) this.unjudgedNavigation = null;
    if (refused) throw new ActionError('destination_blocked', `${hostOf(request.url())} is blocked by the egress policy`);
  }

  /**
   * Runs an action that may start a navigation (click, Enter) and, when one starts
   * within the grace period, waits for its document to load. A navigation blocked by
   * the allow-list fails the action with domain_not_allowed. The action is told when the
   * main frame asks to navigate.
   */
  private async settleNavigation(action: (navigationRequested: Promise<void>) => Promise<void>): Promise<void> {
    const abort = new AbortController();
    let started = false;
    let onStart = (): void => undefined;
    let onBlocked = (): void => undefined;
    const navigationStarted = new Promise<void>((resolve) => {
      onStart = () => {
        started = true;
        resolve();
      };
    });
    const navigationBlocked = new Promise<'blocked'>((resolve) => {
      onBlocked = () => resolve('blocked');
    });
    // Told by the page as it asks (a link, a submit, a script), or seen as the request
    // reaches interception, whichever comes first.
    this.navigationRequestListeners.add(onStart);
    const stopWatchingRequests = this.session.onRequested(onStart);
    this.blockedNavigationListeners.add(onBlocked);
    const loaded = this.page
      .waitForNavigation({
        waitUntil: 'domcontentloaded',
        timeout: NAVIGATION_TIMEOUT_MS,
        signal: abort.signal,
      })
      .then(
        () => 'loaded' as const,
        () => 'unsettled' as const,
      );
    try {
      await action(navigationStarted);
      // A navigation the action asked for has been told once the page caught up.
      await Promise.race([navigationStarted, this.session.caughtUp(), delay(NAVIGATION_REQUEST_WAIT_MS)]);
      // A slow load is not the action's failure: the agent observes whatever is there.
      if (started) await Promise.race([loaded, navigationBlocked]);
      await this.throwIfNavigationBlocked();
    } finally {
      abort.abort();
      this.navigationRequestListeners.delete(onStart);
      stopWatchingRequests();
      this.blockedNavigationListeners.delete(onBlocked);
    }
  }

  /**
   * Resolves once the page has painted the frame that shows what it took so far (the
   * input was handled before the next animation frame, whose rendering commits it: a
   * second frame would cost a frame interval, about 17 ms, per action), PAINT_SETTLE_MS
   * at most (a hidden page runs no animation frames).
   * Every action that changes the page is followed by it (painted()): an event is answered,
   * and a document loaded, before it is painted, and a step's picture is the last frame
   * produced by the step's end (a typing step's picture missed its last keys without it).
   */
  private async untilPainted(): Promise<void> {
    const painted = this.page.evaluate(PAINTED_EXPRESSION).catch(() => undefined);
    await Promise.race([painted, delay(PAINT_SETTLE_MS)]);
  }

  /**
   * resolve(), while the action's gate (started) is passed; either way the gate is passed
   * before the action ends, and a target found for an action the gate refused is let go.
   */
  private async resolveBehind(gate: Promise<void>, target: ActionTarget, purpose: 'click' | 'field'): Promise<ElementHandle<Element>> {
    const found = this.resolve(target, purpose);
    found.catch(() => undefined); // its failure is thrown below, once the gate is passed
    try {
      await gate;
    } catch (error) {
      found.then(releaseHandle, () => undefined);
      throw error;
    }
    return found;
  }

  private async resolve(target: ActionTarget, purpose: 'click' | 'field'): Promise<ElementHandle<Element>> {
    const find = () =>
      this.evaluateAfterLoad(() => {
        if (typeof target !== 'string') return elementByRef(this.refTargets.get(target.ref));
        const script = purpose === 'click' ? FIND_CLICK_TARGET_SCRIPT : FIND_FIELD_SCRIPT;
        return findInFrames(this.page, script, target);
      });
    let element = await find();
    // A ref names an element observed already: it does not come back later.
    const appearsBy = Date.now() + TARGET_APPEAR_MS;
    while (element === null && typeof target === 'string' && Date.now() < appearsBy && this.isAlive()) {
      await delay(TARGET_POLL_MS);
      element = await find();
    }
    if (element === null) {
      const hint = typeof target === 'string' ? '' : ' (observe the page again for current refs)';
      throw new ActionError('target_not_found', `${describeTarget(target)} is not on the page${hint}`);
    }
    return element;
  }

  /**
   * Evaluations racing a navigation fail when their document goes away; one retry once
   * the new document has loaded covers that without inspecting error text.
   */
  private async evaluateAfterLoad<T>(evaluate: () => Promise<T>): Promise<T> {
    try {
      return await evaluate();
    } catch (error) {
      if (error instanceof ActionError || !this.isAlive()) throw error;
      await this.page
        .waitForFunction('document.readyState !== "loading"', { timeout: NAVIGATION_TIMEOUT_MS })
        .catch(() => undefined);
      return evaluate();
    }
  }

  private isAlive(): boolean {
    return this.isBrowserAlive() && !this.page.isClosed();
  }

  /**
   * runInFront() for an action that changes the page: it ends once the page took it, and
   * painted() once the page has painted it (untilPainted), which the next action waits
   * for. In between, whoever drove the page reads and records what it did: a task's step
   * is written while its effect paints.
   */
  private changePage(fallback: ActionErrorCode, what: string, action: () => Promise<void>): Promise<void> {
    return this.runInFront(fallback, what, async () => {
      await action();
      this.painting = this.untilPainted();
    });
  }

  /**
   * run() for an action that changes or watches the page: on the page in front, where it
   * paints and is recorded, once the previous change has painted (its effect is not the
   * next action's).
   */
  private runInFront<T>(fallback: ActionErrorCode, what: string, action: () => Promise<T>): Promise<T> {
    return this.run(fallback, what, async () => {
      await this.painting;
      if (this.mayBeBehindAnotherTab) {
        this.mayBeBehindAnotherTab = false;
        await this.page.bringToFront();
      }
      return action();
    });
  }

  /** Runs an action, failing it at once if the page crashes meanwhile, and turns whatever it throws into an ActionError. */
  private async run<T>(fallback: ActionErrorCode, what: string, action: () => Promise<T>): Promise<T> {
    if (!this.isAlive()) throw browserGone();
    if (this.hasCrashed) throw pageCrashed();
    this.actionStartedAt = Date.now();
    try {
      // A navigation blocked after the last action ended (a click's, started late) fails this one.
      await this.throwIfNavigationBlocked();
      const result = await Promise.race([action(), this.crashed]);
      // What the action read may be the page a blocked navigation left.
      await this.throwIfNavigationBlocked();
      return result;
    } catch (error) {
      // A blocked navigation explains the action's failure better than its own error does.
      await this.throwIfNavigationBlocked();
      if (error instanceof ActionError) throw error;
      if (!this.isAlive() || error instanceof ConnectionClosedError) throw browserGone();
      if (this.hasCrashed) throw pageCrashed();
      if (error instanceof TimeoutError && fallback !== 'navigation_failed') {
        throw new ActionError('timeout', `${what} timed out`);
      }
      throw new ActionError(fallback, `${what} failed`);
    }
  }
}

/** "Control+Shift+A" → ["Control", "Shift", "A"]; a lone "+" stays one key. */
function splitKeyCombination(key: string): KeyInput[] {
  const parts = key.split('+');
  const keys = parts.some((part) => part === '') ? [key] : parts;
  return keys as KeyInput[];
}

function describeTarget(target: ActionTarget): string {
  return typeof target === 'string' ? `"${target}"` : `element ref ${target.ref}`;
}

function domainNotAllowed(url: string): ActionError {
  return new ActionError('domain_not_allowed', `${hostOf(url)} is not an allowed domain`);
}

function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : url;
}

function browserGone(): ActionError {
  return new ActionError('browser_gone', 'the browser is no longer running');
}

function pageCrashed(): ActionError {
  return new ActionError('page_crashed', "the page's renderer crashed");
}

/**
 * Lets the page free an element's handle without waiting for it. The renderer answers
 * once its main thread is free, which after a click that navigates is after the new
 * document's parse (15 ms of a click step on a 2-core host), and nothing needs the answer.
 */
function releaseHandle(handle: ElementHandle<Element>): void {
  handle.dispose().catch(() => undefined);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
