import type { ActionError, ActionTarget, DownloadedFile, DownloadLimits, EffectGate, InteractiveElement, LocatedTarget, PageDriver, PageEffect, PageObservation, TargetFingerprint } from '../../server/browser/types';

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
  #navigatedAt = 0;
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

  navigate(url: string, gate?: EffectGate): Promise<void> {
    return this.#act('navigate', [url], gate, 'changes', () => {
      this.url = url;
      this.#navigatedAt = Date.now();
    });
  }

  click(target: ActionTarget, gate?: EffectGate): Promise<void> {
    return this.#act('click', [target], gate, 'changes', () => undefined);
  }

  type(text: string, into: ActionTarget, options?: { secret?: boolean }, gate?: EffectGate): Promise<void> {
    return this.#act('type', options === undefined ? [text, into] : [text, into, options], gate, 'types', () => undefined);
  }

  press(key: string, gate?: EffectGate): Promise<void> {
    return this.#act('press', [key], gate, 'changes', () => undefined);
  }

  scroll(direction: 'up' | 'down', gate?: EffectGate): Promise<void> {
    return this.#act('scroll', [direction], gate, 'changes', () => undefined);
  }

  waitForText(text: string, timeoutMs: number, gate?: EffectGate): Promise<void> {
    return this.#act('waitForText', [text, timeoutMs], gate, 'watches', () => undefined);
  }

  textsOf(selector: string): Promise<string[]> {
    return this.#call('textsOf', [selector], () => (this.#pages[this.url]?.texts?.[selector] ?? '').split('\n').filter((line) => line !== ''));
  }

  /** A page of no pixels has nothing to paint: not recorded as a call (it is no action). */
  painted(): Promise<void> {
    return Promise.resolve();
  }

  /** Not recorded as a call either: a read of what the driver saw. */
  navigatedAt(): number {
    return this.#navigatedAt;
  }

  screenshot(): Promise<Buffer> {
    // The JPEG start and end markers: enough for what unit tests check.
    return this.#call('screenshot', [], () => Buffer.from([0xff, 0xd8, 0xff, 0xd9]));
  }

  download(target: ActionTarget, limits: DownloadLimits, gate?: EffectGate): Promise<DownloadedFile> {
    return this.#act('download', [target, limits], gate, 'changes', () => ({ file: '/nonexistent/file', folder: '/nonexistent', suggestedName: 'file.txt', size: 0 }));
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

  /** #call() for an action: its gate, when given, is passed first (the call is recorded without it). */
  async #act<T>(method: DriverMethod, args: unknown[], gate: EffectGate | undefined, kind: PageEffect, effect: () => T): Promise<T> {
    await gate?.(kind);
    return this.#call(method, args, effect);
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
