import type { ActionError, ActionTarget, DownloadedFile, DownloadLimits, InteractiveElement, LocatedTarget, PageDriver, PageObservation, TargetFingerprint } from '../../server/browser/types';

/**
 * A recording stand-in for the real driver, for unit tests of the agent's logic only (the
 * integration tests drive real Chromium). Pages are looked up by URL; every call is recorded
 * in order; a test can make the next call of a method fail or never settle.
 */
export interface FakePage {
  title: string;
  elements?: InteractiveElement[];
  /** innerText by CSS selector, for textOf. */
  texts?: Record<string, string>;
}

export type DriverMethod = keyof PageDriver;

export interface DriverCall {
  method: DriverMethod;
  args: unknown[];
}

export class FakePageDriver implements PageDriver {
  readonly calls: DriverCall[] = [];
  url = 'about:blank';
  readonly #pages: Record<string, FakePage>;
  readonly #failures = new Map<DriverMethod, ActionError>();
  readonly #hanging = new Set<DriverMethod>();

  constructor(pages: Record<string, FakePage> = {}) {
    this.#pages = pages;
  }

  /** The next call of `method` throws `error`. */
  failNext(method: DriverMethod, error: ActionError): void {
    this.#failures.set(method, error);
  }

  /** Every later call of `method` never settles, like a wait on a page that never changes. */
  hang(method: DriverMethod): void {
    this.#hanging.add(method);
  }

  /** The methods called, in order, without their arguments. */
  get methods(): DriverMethod[] {
    return this.calls.map((call) => call.method);
  }

  observe(options?: { screenshot?: boolean; elements?: boolean }): Promise<PageObservation> {
    return this.#call('observe', [options], () => {
      const page = this.#pages[this.url];
      const observation: PageObservation = { url: this.url, title: page?.title ?? '', elements: options?.elements === false ? [] : (page?.elements ?? []) };
      if (options?.screenshot === true) observation.screenshot = 'ZmFrZS1zY3JlZW5zaG90';
      return observation;
    });
  }

  navigate(url: string): Promise<void> {
    return this.#call('navigate', [url], () => {
      this.url = url;
    });
  }

  click(target: ActionTarget): Promise<void> {
    return this.#call('click', [target], () => undefined);
  }

  type(text: string, into: ActionTarget, options?: { secret?: boolean }): Promise<void> {
    return this.#call('type', options === undefined ? [text, into] : [text, into, options], () => undefined);
  }

  press(key: string): Promise<void> {
    return this.#call('press', [key], () => undefined);
  }

  scroll(direction: 'up' | 'down'): Promise<void> {
    return this.#call('scroll', [direction], () => undefined);
  }

  waitForText(text: string, timeoutMs: number): Promise<void> {
    return this.#call('waitForText', [text, timeoutMs], () => undefined);
  }

  textsOf(selector: string): Promise<string[]> {
    return this.#call('textsOf', [selector], () => (this.#pages[this.url]?.texts?.[selector] ?? '').split('\n').filter((line) => line !== ''));
  }

  screenshot(): Promise<Buffer> {
    // The JPEG start and end markers: enough for what unit tests check.
    return this.#call('screenshot', [], () => Buffer.from([0xff, 0xd8, 0xff, 0xd9]));
  }

  download(target: ActionTarget, limits: DownloadLimits): Promise<DownloadedFile> {
    return this.#call('download', [target, limits], () => ({ file: '/nonexistent/file', folder: '/nonexistent', suggestedName: 'file.txt', size: 0 }));
  }

  textOf(selector: string): Promise<string> {
    return this.#call('textOf', [selector], () => this.#pages[this.url]?.texts?.[selector] ?? '');
  }

  setAllowedDomains(domains: string[] | null): Promise<void> {
    return this.#call('setAllowedDomains', [domains], () => undefined);
  }

  /** No page structure to fingerprint: the replay cache stores nothing for fake pages. */
  fingerprint(target: ActionTarget, purpose: 'click' | 'field'): Promise<TargetFingerprint | null> {
    return this.#call('fingerprint', [target, purpose], () => null);
  }

  locate(fingerprint: TargetFingerprint): Promise<LocatedTarget> {
    return this.#call('locate', [fingerprint], () => ({ status: 'missing' }) as const);
  }

  async #call<T>(method: DriverMethod, args: unknown[], effect: () => T): Promise<T> {
    this.calls.push({ method, args });
    if (this.#hanging.has(method)) return new Promise<T>(() => undefined);
    const failure = this.#failures.get(method);
    if (failure !== undefined) {
      this.#failures.delete(method);
      throw failure;
    }
    return effect();
  }
}
