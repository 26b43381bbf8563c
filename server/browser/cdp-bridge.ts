import type { Browser, CDPSession } from 'puppeteer-core';
import { openCdpSession } from './cdp-sessions.js';
import {
  confinedTraceStart,
  filterTakes,
  inDeviceContext,
  isAllowedUrl,
  isDeviceTarget,
  parseCdpCommand,
  ROOT_RULES,
  sessionRule,
  type CdpCommand,
  type CdpScope,
  type TargetInfoLike,
} from './cdp-rules.js';
import { STAGEHAND_CLIENT_TARGET_URL, type StagehandExtension } from './stagehand-extension.js';
import type { CdpChannel, CdpChannelEnd } from './types.js';

type Params = Record<string, unknown>;
type Send = (method: string, params?: Params) => Promise<unknown>;

/**
 * What a bridge may do with the Stagehand extension (docs/api.md, "Stagehand 4"): `owner`,
 * a client's own connection, loads it at Extensions.getExtensions and uninstalls it when it
 * ends; `worker`, the extension worker's own connection, sees it but never loads it. The
 * extension is null where the device shares its browser (browserless).
 */
export interface BridgeExtension {
  extension: StagehandExtension | null;
  role: 'owner' | 'worker';
}

/**
 * Whether a client's Target.createTarget may be answered with the browser's first tab,
 * still blank, instead of a new one: true once per browser, for the first client that asks
 * (docs/api.md, "CDP access"). A new tab costs Chrome a renderer process, the longest part
 * of a fresh connection's first page; the first tab already has one.
 */
export type BlankTabClaim = () => boolean;

/** JSON-RPC's "server error": what a refused or failed command answers. */
const REFUSED_CODE = -32000;
const INVALID_REQUEST_CODE = -32600;
/**
 * Commands of one client waiting for the browser at once; past this a command is answered
 * with an error at once, so a client cannot pile up work in the service's connection.
 */
export const MAX_COMMANDS_IN_FLIGHT = 1_000;

function sendOn(session: CDPSession): Send {
  // puppeteer types send() by its protocol map; the bridge relays methods by name.
  return (session.send as unknown as Send).bind(session);
}

/**
 * One client's DevTools connection to a device's browser, multiplexed on the connection
 * the service already holds (a pipe to a local Chromium, a WebSocket to browserless): the
 * client gets a browser-level session of its own (Target.attachToTarget on the browser
 * target, flatten mode), so its auto-attach and discovery settings never touch the
 * service's, and every session it opens from there is its own. A client that asks for
 * another browser session (Target.attachToBrowserTarget, Playwright's newCDPSession) gets
 * one more such session, known to it by its real id, under the same rules. Commands pass
 * the rules of cdp-rules.ts; events and answers that name targets are filtered to the
 * device's.
 *
 * Answers travel through puppeteer, so an event Chrome sent just after an answer can
 * reach the client just before it (never the other way round).
 */
export class CdpBridge implements CdpChannel {
  readonly #root: CDPSession;
  /** The client's further browser-level sessions (Target.attachToBrowserTarget), by session id. */
  readonly #browserSessions = new Map<string, CDPSession>();
  readonly #scope: CdpScope;
  readonly #deliver: (message: string) => void;
  readonly #onEnd: (reason: CdpChannelEnd) => void;
  /** The client's sessions of device targets, by session id. */
  readonly #sessions = new Map<string, CDPSession>();
  /** Of those, the ones on one of the client's browser-level sessions: their target and that session (undefined: the first), by session id. */
  readonly #topLevelTargets = new Map<string, { targetId: string; browserSessionId: string | undefined }>();
  /** Device targets the client has been told about, for the events that carry only an id. */
  readonly #knownTargets = new Set<string>();
  #ended = false;
  #inFlight = 0;
  #stopWatchingBrowser: () => void = () => undefined;
  readonly #openBrowserSession: () => Promise<CDPSession>;
  readonly #extension: BridgeExtension;
  readonly #claimBlankTab: BlankTabClaim;

  private constructor(
    browser: Browser,
    root: CDPSession,
    scope: CdpScope,
    extension: BridgeExtension,
    claimBlankTab: BlankTabClaim,
    deliver: (message: string) => void,
    onEnd: (reason: CdpChannelEnd) => void,
  ) {
    this.#openBrowserSession = () => openCdpSession(browser.target());
    this.#extension = extension;
    this.#claimBlankTab = claimBlankTab;
    this.#root = root;
    this.#scope = scope;
    this.#deliver = deliver;
    this.#onEnd = onEnd;
  }

  static async open(
    browser: Browser,
    scope: CdpScope,
    extension: BridgeExtension,
    claimBlankTab: BlankTabClaim,
    deliver: (message: string) => void,
    onEnd: (reason: CdpChannelEnd) => void,
  ): Promise<CdpBridge> {
    const root = await openCdpSession(browser.target());
    const bridge = new CdpBridge(browser, root, scope, extension, claimBlankTab, deliver, onEnd);
    root.on('*' as never, ((method: unknown, params: unknown) => bridge.#rootEvent(undefined, method, params as Params)) as never);
    const gone = () => bridge.#end('browser_gone');
    browser.once('disconnected', gone);
    bridge.#stopWatchingBrowser = () => browser.off('disconnected', gone);
    return bridge;
  }

  receive(text: string): void {
    if (this.#ended) return;
    const command = parseCdpCommand(text);
    if ('invalid' in command) {
      this.#answerError(command.id ?? 0, undefined, INVALID_REQUEST_CODE, 'Messages are CDP commands: {"id": <integer>, "method": "Domain.method", "params"?: {...}, "sessionId"?: "..."}.');
      return;
    }
    if (this.#inFlight >= MAX_COMMANDS_IN_FLIGHT) {
      this.#refuse(command, `More than ${MAX_COMMANDS_IN_FLIGHT} commands are waiting for an answer; wait for some first.`);
      return;
    }
    this.#inFlight += 1;
    void this.#handle(command)
      .catch((error: unknown) => this.#answerFailure(command, error))
      .finally(() => {
        this.#inFlight -= 1;
      });
  }

  async close(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopWatchingBrowser();
    await Promise.all([...this.#sessions.values()].map((session) => session.detach().catch(() => undefined)));
    this.#sessions.clear();
    await Promise.all([...this.#browserSessions.values(), this.#root].map((session) => session.detach().catch(() => undefined)));
    this.#browserSessions.clear();
    // No extension code outlives the connection that had it loaded.
    if (this.#extension.role === 'owner') await this.#extension.extension?.unload();
  }

  #end(reason: CdpChannelEnd): void {
    if (this.#ended) return;
    void this.close();
    this.#onEnd(reason);
  }

  async #handle(command: CdpCommand): Promise<void> {
    const root = command.sessionId === undefined ? this.#root : this.#browserSessions.get(command.sessionId);
    if (root === undefined) return this.#handleOnSession(command, command.sessionId!);
    const rule = ROOT_RULES[command.method];
    const send = sendOn(root);
    const { params } = command;
    switch (rule?.kind) {
      case undefined:
        return this.#refuse(command, `${command.method} is not available through this service's CDP access (docs/api.md, "CDP access").`);
      case 'forward':
        return this.#answer(command, await send(command.method, params));
      case 'answer':
        return this.#answer(command, rule.result);
      case 'end_connection':
        this.#answer(command, {});
        return this.#end('client_closed_browser');
      case 'whole_browser_only':
        if (this.#scope.contextId !== null) return this.#refuse(command, `${command.method} acts on a browser other devices share.`);
        return this.#answer(command, await send(command.method, params));
      case 'device_context': {
        const confined = inDeviceContext(this.#scope, params);
        if (confined === null) return this.#refuse(command, 'Only the device\'s own browser context (the default one) can be named.');
        return this.#answer(command, await send(command.method, confined));
      }
      case 'device_target': {
        const targetId = params[rule.param];
        if (targetId === undefined && rule.optional) return this.#answer(command, await send(command.method, params));
        if (!(await this.#isDeviceTargetId(targetId))) return this.#refuse(command, 'No target with given id found');
        return this.#answer(command, await send(command.method, params));
      }
      case 'stagehand_extension': {
        const { extension, role } = this.#extension;
        if (extension === null) return this.#refuse(command, 'Stagehand 4 needs a device of the local provider: its extension cannot be loaded into a browser that devices share (docs/api.md, "Stagehand 4").');
        if (role === 'worker') return this.#answer(command, { extensions: extension.id === null ? [] : [await extension.load()] });
        try {
          return this.#answer(command, { extensions: [await extension.load()] });
        } catch (error) {
          return this.#refuse(command, error instanceof Error && error.message.startsWith('Stagehand 4') ? error.message : 'The Stagehand extension could not be loaded into this device.');
        }
      }
      case 'create_target': {
        if (!isAllowedUrl(params.url) && !this.#isExtensionTargetUrl(params)) return this.#refuse(command, 'Only http:, https:, data: and about:blank URLs can be opened.');
        const confined = inDeviceContext(this.#scope, params);
        if (confined === null) return this.#refuse(command, 'Only the device\'s own browser context (the default one) can be named.');
        const targetId = (await this.#blankTab(root, confined)) ?? ((await send(command.method, confined)) as { targetId: string }).targetId;
        this.#knownTargets.add(targetId);
        return this.#answer(command, { targetId });
      }
      case 'attach':
        if (params.flatten !== true) return this.#refuse(command, 'Only flatten mode ("flatten": true) is supported.');
        if (!(await this.#isDeviceTargetId(params.targetId))) return this.#refuse(command, 'No target with given id found');
        return this.#answer(command, await send(command.method, params));
      case 'detach': {
        const sessionId = params.sessionId;
        if (typeof sessionId === 'string' && this.#browserSessions.has(sessionId)) return this.#answer(command, await this.#detachBrowserSession(sessionId));
        if (typeof sessionId !== 'string' || !this.#sessions.has(sessionId)) return this.#refuse(command, 'No session with given id');
        return this.#answer(command, await send(command.method, { sessionId }));
      }
      case 'browser_session': {
        return this.#answer(command, { sessionId: this.#addBrowserSession(await this.#openBrowserSession()) });
      }
      case 'list_targets': {
        const { targetInfos } = (await send(command.method, params)) as { targetInfos: TargetInfoLike[] };
        const visible = targetInfos.filter((info) => this.#visible(info));
        for (const info of visible) this.#knownTargets.add(info.targetId);
        return this.#answer(command, { targetInfos: visible });
      }
      case 'auto_attach': {
        if (params.autoAttach === true && params.flatten !== true) return this.#refuse(command, 'Only flatten mode ("flatten": true) is supported.');
        const result = await send(command.method, params);
        if (params.autoAttach === true) await this.#attachExisting(root, command.sessionId, params.filter);
        return this.#answer(command, result);
      }
    }
  }

  async #handleOnSession(command: CdpCommand, sessionId: string): Promise<void> {
    const session = this.#sessions.get(sessionId);
    if (session === undefined) return this.#refuse(command, `Session with given id not found.`);
    const rule = sessionRule(command.method);
    const send = sendOn(session);
    let params = command.params;
    switch (rule.kind) {
      case 'refuse':
        return this.#refuse(command, `${command.method} is not available through this service's CDP access (docs/api.md, "CDP access").`);
      case 'url':
        if (!(rule.optional && params[rule.param] === undefined) && !isAllowedUrl(params[rule.param])) {
          return this.#refuse(command, 'Only http:, https:, data: and about:blank URLs can be opened.');
        }
        break;
      case 'without':
        if (params[rule.param] !== undefined) return this.#refuse(command, `${rule.param} cannot be given on a target's session.`);
        break;
      case 'device_context': {
        const confined = inDeviceContext(this.#scope, params);
        if (confined === null) return this.#refuse(command, 'Only the device\'s own browser context (the default one) can be named.');
        params = confined;
        break;
      }
      case 'whole_browser_only':
        if (this.#scope.contextId !== null) return this.#refuse(command, `${command.method} would record a browser other devices share.`);
        break;
      case 'trace_start': {
        if (this.#scope.contextId !== null) return this.#refuse(command, `${command.method} would record a browser other devices share.`);
        const confined = confinedTraceStart(params);
        if (confined === null) return this.#refuse(command, 'Only Chrome\'s own tracing backend can record, without a perfettoConfig.');
        params = confined;
        break;
      }
      case 'forward':
        break;
    }
    this.#answer(command, await send(command.method, params));
  }

  /**
   * Chrome auto-attaches a browser session that is not the connection's own (as the
   * client's is) to the targets created from then on, and to existing pages, but not to
   * existing tabs, which Puppeteer asks for: the device's existing targets the client's
   * filter takes and it has no session of yet are attached here, before the answer, as
   * Chrome would have.
   */
  async #attachExisting(root: CDPSession, browserSessionId: string | undefined, filter: unknown): Promise<void> {
    const { targetInfos } = (await sendOn(root)('Target.getTargets', { filter: [{}] })) as { targetInfos: TargetInfoLike[] };
    const attached = new Set([...this.#topLevelTargets.values()].filter((each) => each.browserSessionId === browserSessionId).map((each) => each.targetId));
    const missing = targetInfos.filter((info) => this.#visible(info) && filterTakes(filter, info.type) && !attached.has(info.targetId));
    // A target closing meanwhile is simply not attached.
    await Promise.all(missing.map((info) => sendOn(root)('Target.attachToTarget', { targetId: info.targetId, flatten: true }).catch(() => undefined)));
  }

  /** Events of one of the client's browser-level sessions: only what concerns device targets gets through. */
  #rootEvent(browserSessionId: string | undefined, method: unknown, params: Params): void {
    if (this.#ended || typeof method !== 'string' || !method.includes('.')) return;
    switch (method) {
      case 'Target.attachedToTarget':
        return this.#attached(params, browserSessionId, true);
      case 'Target.detachedFromTarget':
        return this.#detached(params, browserSessionId);
      case 'Target.targetCreated':
      case 'Target.targetInfoChanged': {
        const info = params.targetInfo as TargetInfoLike;
        if (!this.#visible(info)) {
          // A target that turned into a hidden one (a tab on chrome://) is gone for the client.
          if (this.#knownTargets.delete(info.targetId)) this.#emit('Target.targetDestroyed', { targetId: info.targetId }, browserSessionId);
          return;
        }
        this.#knownTargets.add(info.targetId);
        return this.#emit(method, params, browserSessionId);
      }
      case 'Target.targetDestroyed':
      case 'Target.targetCrashed': {
        const targetId = params.targetId as string;
        if (!this.#knownTargets.has(targetId)) return;
        if (method === 'Target.targetDestroyed') this.#knownTargets.delete(targetId);
        return this.#emit(method, params, browserSessionId);
      }
      default:
        // Browser-wide events (downloads of any context, ...) are not the client's.
        return;
    }
  }

  /**
   * A target attached to one of the client's sessions. A device target becomes one of the
   * client's sessions; any other (another device's page, the browser's own UI) is let go
   * unseen, resumed first if Chrome holds it for the debugger.
   */
  #attached(params: Params, parentSessionId: string | undefined, onBrowserSession: boolean): void {
    const info = params.targetInfo as TargetInfoLike;
    const sessionId = params.sessionId as string;
    const session = this.#root.connection()?.session(sessionId) ?? null;
    if (session === null) return;
    if (onBrowserSession && !this.#visible(info)) {
      const send = sendOn(session);
      if (params.waitingForDebugger === true) void send('Runtime.runIfWaitingForDebugger').catch(() => undefined);
      void session.detach().catch(() => undefined);
      return;
    }
    this.#sessions.set(sessionId, session);
    if (onBrowserSession) this.#topLevelTargets.set(sessionId, { targetId: info.targetId, browserSessionId: parentSessionId });
    this.#knownTargets.add(info.targetId);
    session.on('*' as never, ((childMethod: unknown, childParams: unknown) => this.#sessionEvent(sessionId, childMethod, childParams as Params)) as never);
    this.#emit('Target.attachedToTarget', params, parentSessionId);
  }

  #detached(params: Params, parentSessionId: string | undefined): void {
    const sessionId = params.sessionId as string;
    if (!this.#sessions.delete(sessionId)) return;
    this.#topLevelTargets.delete(sessionId);
    this.#emit('Target.detachedFromTarget', params, parentSessionId);
  }

  #sessionEvent(sessionId: string, method: unknown, params: Params): void {
    if (this.#ended || typeof method !== 'string' || !method.includes('.') || !this.#sessions.has(sessionId)) return;
    // Frames and workers of a device target belong to the device.
    if (method === 'Target.attachedToTarget') return this.#attached(params, sessionId, false);
    if (method === 'Target.detachedFromTarget') return this.#detached(params, sessionId);
    this.#emit(method, params, sessionId);
  }

  #addBrowserSession(session: CDPSession): string {
    const sessionId = session.id();
    this.#browserSessions.set(sessionId, session);
    session.on('*' as never, ((method: unknown, params: unknown) => this.#rootEvent(sessionId, method, params as Params)) as never);
    return sessionId;
  }

  /** Detaching one of the client's further browser sessions, and the sessions it had attached. */
  async #detachBrowserSession(sessionId: string): Promise<Record<string, never>> {
    const session = this.#browserSessions.get(sessionId)!;
    this.#browserSessions.delete(sessionId);
    for (const [childId, child] of this.#topLevelTargets) if (child.browserSessionId === sessionId) this.#detached({ sessionId: childId }, sessionId);
    await session.detach().catch(() => undefined);
    this.#emit('Target.detachedFromTarget', { sessionId }, undefined);
    return {};
  }

  /**
   * The browser's first tab, for a Target.createTarget that asks for nothing but a blank
   * page in the device's context, when this is the browser's first such request and that
   * tab is the device's only page and still blank; otherwise null (a new tab is created).
   */
  async #blankTab(root: CDPSession, params: Params): Promise<string | null> {
    const plain = Object.keys(params).every((name) => name === 'url' || name === 'browserContextId') && params.url === 'about:blank';
    if (!plain || !this.#claimBlankTab()) return null;
    const { targetInfos } = (await sendOn(root)('Target.getTargets', { filter: [{ type: 'page' }] })) as { targetInfos: TargetInfoLike[] };
    const pages = targetInfos.filter((info) => isDeviceTarget(this.#scope, info));
    return pages.length === 1 && pages[0]!.url === 'about:blank' ? pages[0]!.targetId : null;
  }

  async #isDeviceTargetId(targetId: unknown): Promise<boolean> {
    if (typeof targetId !== 'string') return false;
    try {
      const { targetInfo } = (await sendOn(this.#root)('Target.getTargetInfo', { targetId })) as { targetInfo: TargetInfoLike };
      return this.#visible(targetInfo);
    } catch {
      return false;
    }
  }

  /**
   * A target the client may see: the device's, and while the Stagehand extension is loaded
   * its service worker, its own pages and Stagehand's hidden client target; never another
   * extension's or a browser page.
   */
  #visible(info: TargetInfoLike): boolean {
    if (isDeviceTarget(this.#scope, info)) return true;
    const extension = this.#extension.extension;
    if (extension === null || extension.id === null) return false;
    if (info.type === 'service_worker') return extension.isOwnWorker(info.url);
    if (info.type === 'page') return extension.isOwnPage(info.url);
    return info.type === 'other' && info.url === STAGEHAND_CLIENT_TARGET_URL;
  }

  /** Target.createTarget of the loaded extension's own pages, or of Stagehand's hidden client target. */
  #isExtensionTargetUrl(params: Params): boolean {
    const extension = this.#extension.extension;
    if (extension === null || extension.id === null) return false;
    if (params.url === STAGEHAND_CLIENT_TARGET_URL) return params.hidden === true;
    return extension.isOwnPage(params.url);
  }

  #emit(method: string, params: Params, sessionId: string | undefined): void {
    this.#deliver(JSON.stringify(sessionId === undefined ? { method, params } : { method, params, sessionId }));
  }

  #answer(command: CdpCommand, result: unknown): void {
    if (this.#ended && command.method !== 'Browser.close') return;
    this.#deliver(JSON.stringify(command.sessionId === undefined ? { id: command.id, result } : { id: command.id, result, sessionId: command.sessionId }));
  }

  #refuse(command: CdpCommand, message: string): void {
    this.#answerError(command.id, command.sessionId, REFUSED_CODE, message);
  }

  #answerFailure(command: CdpCommand, error: unknown): void {
    // Chrome's own refusal (bad params, no such node) goes back as Chrome worded it.
    const protocol = error as { code?: unknown; originalMessage?: unknown };
    const code = typeof protocol.code === 'number' ? protocol.code : REFUSED_CODE;
    const message = typeof protocol.originalMessage === 'string' && protocol.originalMessage !== '' ? protocol.originalMessage : 'The command failed; the target may have closed.';
    this.#answerError(command.id, command.sessionId, code, message);
  }

  #answerError(id: number, sessionId: string | undefined, code: number, message: string): void {
    if (this.#ended) return;
    const error = { code, message };
    this.#deliver(JSON.stringify(sessionId === undefined ? { id, error } : { id, error, sessionId }));
  }
}
