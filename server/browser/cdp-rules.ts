// What a customer's DevTools client may do to its device's browser (docs/api.md, "CDP
// access"). An allow-list: a method not named here is refused. The device is the whole
// browser (local provider) or one browser context of a browser that may hold other
// devices (browserless); either way the client sees a browser whose default context is
// the device, and nothing else.

/** Which part of the browser is the device. */
export interface CdpScope {
  /** The device's browser context, or null when the device is the whole browser. */
  contextId: string | null;
}

/** A target as Chrome describes it (Target.TargetInfo, the fields the rules read). */
export interface TargetInfoLike {
  targetId: string;
  type: string;
  url?: string;
  browserContextId?: string;
}

/**
 * Target types a client may see and attach to (`tab` is the target above a page, which
 * Puppeteer attaches to). The browser target (a session of it would bypass these rules:
 * Target.attachToBrowserTarget is answered with one that keeps them) and Chrome's own UI (`browser_ui`, chrome:// pages) are not among them.
 */
const DEVICE_TARGET_TYPES = new Set(['tab', 'page', 'iframe', 'worker', 'shared_worker', 'service_worker']);

/** One entry of a Target.TargetFilter: the first entry whose `type` matches (or has none) decides. */
interface TargetFilterEntry {
  type?: unknown;
  exclude?: unknown;
}

/** Chrome's filter when a client gives none: every type but the browser and tabs. */
const DEFAULT_TARGET_FILTER: readonly TargetFilterEntry[] = [{ type: 'browser', exclude: true }, { type: 'tab', exclude: true }, {}];

/**
 * Whether a Target.TargetFilter (as a client gave it to Target.setAutoAttach) takes a
 * target of `type`, as Chrome reads it: entries in order, the first that matches decides,
 * none matching excludes; absent is Chrome's default.
 */
export function filterTakes(filter: unknown, type: string): boolean {
  const entries = Array.isArray(filter) ? (filter as TargetFilterEntry[]) : DEFAULT_TARGET_FILTER;
  for (const entry of entries) {
    if (typeof entry !== 'object' || entry === null) continue;
    if (entry.type === undefined || entry.type === type) return entry.exclude !== true;
  }
  return false;
}

/**
 * Schemes of the browser's own pages (WebUI, with bindings into the browser) and of
 * extensions: never a device target for a client, whatever type Chrome gives them (headless
 * Chromium lists its omnibox popup, chrome://omnibox-popup.top-chrome/, as a `page`).
 */
const HIDDEN_URL_SCHEMES = ['chrome:', 'chrome-untrusted:', 'devtools:', 'chrome-extension:'];

export function isDeviceTarget(scope: CdpScope, info: TargetInfoLike): boolean {
  if (!DEVICE_TARGET_TYPES.has(info.type)) return false;
  const url = info.url ?? '';
  if (HIDDEN_URL_SCHEMES.some((scheme) => url.startsWith(scheme))) return false;
  return scope.contextId === null || info.browserContextId === scope.contextId;
}

/**
 * URLs a client may open: the web (through the device's egress proxy, which applies the
 * egress policy), `about:blank` and `data:`. Never `file:`, `chrome:`, `devtools:`,
 * `view-source:`, `javascript:` or any other scheme that reaches the host or the browser.
 */
export function isAllowedUrl(url: unknown): boolean {
  if (typeof url !== 'string') return false;
  if (url === 'about:blank') return true;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' || parsed.protocol === 'data:';
}

/** How a command on the browser-level session is handled. */
export type RootRule =
  /** Sent on as is. */
  | { kind: 'forward' }
  /** `params.browserContextId` absent or the device's; sent with the device's. */
  | { kind: 'device_context' }
  /** `params[param]` must name a device target (absent allowed when `optional`). */
  | { kind: 'device_target'; param: string; optional: boolean }
  /** Answered by the service, never sent. */
  | { kind: 'answer'; result: Record<string, unknown> }
  /** Target.createTarget: the URL checked, the context the device's. */
  | { kind: 'create_target' }
  /** Target.attachToTarget: a device target, flatten mode only. */
  | { kind: 'attach' }
  /** Target.detachFromTarget: one of the client's own sessions. */
  | { kind: 'detach' }
  /** Target.attachToBrowserTarget: one more browser-level session of the client's, under these same rules. */
  | { kind: 'browser_session' }
  /** Target.getTargets: the answer lists the device's targets only. */
  | { kind: 'list_targets' }
  /**
   * Target.setAutoAttach at the browser level: flatten mode only; foreign targets are
   * hidden as they attach, and the device's existing targets the filter takes are attached.
   */
  | { kind: 'auto_attach' }
  /** Browser.close: answered, then the CDP connection ends; the device's browser stays. */
  | { kind: 'end_connection' }
  /** Only when the device is the whole browser; refused in a shared one. */
  | { kind: 'whole_browser_only' }
  /**
   * Extensions.getExtensions: answered by the service with the Stagehand extension only,
   * which it loads for this connection (local provider); refused on browserless.
   */
  | { kind: 'stagehand_extension' };

export const ROOT_RULES: Readonly<Record<string, RootRule>> = {
  'Browser.getVersion': { kind: 'forward' },
  'Browser.close': { kind: 'end_connection' },
  // Downloads stay as the service set them: a path of the client's machine means nothing
  // on the device's host, and a path of that host must never be written by a client.
  'Browser.setDownloadBehavior': { kind: 'answer', result: {} },
  'Browser.cancelDownload': { kind: 'answer', result: {} },
  'Browser.getWindowForTarget': { kind: 'device_target', param: 'targetId', optional: false },
  'Browser.getWindowBounds': { kind: 'whole_browser_only' },
  'Browser.setWindowBounds': { kind: 'whole_browser_only' },
  'Browser.grantPermissions': { kind: 'device_context' },
  'Browser.resetPermissions': { kind: 'device_context' },
  'Browser.setPermission': { kind: 'device_context' },
  'Storage.getCookies': { kind: 'device_context' },
  'Storage.setCookies': { kind: 'device_context' },
  'Storage.clearCookies': { kind: 'device_context' },
  'Target.setAutoAttach': { kind: 'auto_attach' },
  'Target.setDiscoverTargets': { kind: 'forward' },
  'Target.getTargets': { kind: 'list_targets' },
  'Target.getTargetInfo': { kind: 'device_target', param: 'targetId', optional: true },
  // The device is the default context; no other context exists for the client.
  'Target.getBrowserContexts': { kind: 'answer', result: { browserContextIds: [] } },
  'Target.createTarget': { kind: 'create_target' },
  'Target.closeTarget': { kind: 'device_target', param: 'targetId', optional: false },
  'Target.activateTarget': { kind: 'device_target', param: 'targetId', optional: false },
  'Target.attachToTarget': { kind: 'attach' },
  'Target.detachFromTarget': { kind: 'detach' },
  'Target.attachToBrowserTarget': { kind: 'browser_session' },
  // Every other Extensions method (loadUnpacked, uninstall, storage) stays refused.
  'Extensions.getExtensions': { kind: 'stagehand_extension' },
};

/**
 * Domains a client may use on a session of one of the device's targets (a page, a frame,
 * a worker): what runs inside the page and the device's own storage. Not among them:
 * Browser (but getVersion), SystemInfo, Memory, Extensions, PWA, Cast and anything else
 * Chrome adds later; Tracing has a rule of its own (sessionRule).
 */
const SESSION_DOMAINS = new Set([
  'Accessibility',
  'Animation',
  'Audits',
  'Autofill',
  'CSS',
  'CacheStorage',
  'Console',
  'DOM',
  'DOMDebugger',
  'DOMSnapshot',
  'DOMStorage',
  'Debugger',
  'DeviceOrientation',
  'Emulation',
  'EventBreakpoints',
  'Fetch',
  'HeapProfiler',
  'IO',
  'IndexedDB',
  'Input',
  'Inspector',
  'LayerTree',
  'Log',
  'Media',
  'Network',
  'Overlay',
  'Page',
  'Performance',
  'PerformanceTimeline',
  'Preload',
  'Profiler',
  'Runtime',
  'Schema',
  'Security',
  'ServiceWorker',
  'Storage',
  'Target',
  'WebAudio',
  'WebAuthn',
  // The tools a page declares for agents (navigator.modelContext), invoked in the page.
  'WebMCP',
]);

/** Methods of allowed domains that reach the host's files, other contexts, or open other browsers. */
const SESSION_REFUSED = new Set([
  // Reads files of the browser's host into the page.
  'DOM.setFileInputFiles',
  'DOM.getFileInfo',
  // Loads any URL, file: included, outside the page.
  'Network.loadNetworkResource',
  // Writes downloads to a host path.
  'Page.setDownloadBehavior',
]);

/** Target methods on a target's session: following its frames and workers. */
const SESSION_TARGET_METHODS = new Set(['Target.setAutoAttach', 'Target.getTargetInfo', 'Target.detachFromTarget']);

/** How a command on a target's session is handled. */
export type SessionRule =
  | { kind: 'forward' }
  /** `params[param]` must be an allowed URL (absent allowed when `optional`). */
  | { kind: 'url'; param: string; optional: boolean }
  | { kind: 'device_context' }
  /** Refused when `params[param]` is present (Target.getTargetInfo of another target). */
  | { kind: 'without'; param: string }
  /**
   * Only when the device is the whole browser. Tracing on a page's session records the
   * processes that page uses and the browser process, whose events name other contexts'
   * pages: harmless when every context is the device's, not in a browser devices share.
   */
  | { kind: 'whole_browser_only' }
  /**
   * Tracing.start: whole browser only as the rest of Tracing, and on Chrome's own tracing
   * backend (confinedTraceStart), never the host's system tracing service, which records
   * every process of the machine, other devices' browsers among them.
   */
  | { kind: 'trace_start' }
  | { kind: 'refuse' };

export function sessionRule(method: string): SessionRule {
  const domain = method.slice(0, method.indexOf('.'));
  // What Lighthouse and others ask any session: the browser's product and protocol version.
  if (method === 'Browser.getVersion') return { kind: 'forward' };
  if (method === 'Tracing.start') return { kind: 'trace_start' };
  if (domain === 'Tracing') return { kind: 'whole_browser_only' };
  if (!SESSION_DOMAINS.has(domain) || SESSION_REFUSED.has(method)) return { kind: 'refuse' };
  if (domain === 'Target' && !SESSION_TARGET_METHODS.has(method)) return { kind: 'refuse' };
  if (method === 'Target.getTargetInfo') return { kind: 'without', param: 'targetId' };
  if (method === 'Page.navigate') return { kind: 'url', param: 'url', optional: false };
  // Fetch may rewrite an intercepted request's URL: not to a file.
  if (method === 'Fetch.continueRequest') return { kind: 'url', param: 'url', optional: true };
  if (method === 'Storage.getCookies' || method === 'Storage.setCookies' || method === 'Storage.clearCookies') return { kind: 'device_context' };
  return { kind: 'forward' };
}

/**
 * Tracing.start's params on Chrome's own backend (`tracingBackend: "chrome"`, whatever the
 * client chose: `auto` may pick the system service), or null when they ask for the system
 * backend or bring a `perfettoConfig`, which could name the system's data sources.
 */
export function confinedTraceStart(params: Record<string, unknown>): Record<string, unknown> | null {
  if (params.perfettoConfig !== undefined || params.tracingBackend === 'system') return null;
  return { ...params, tracingBackend: 'chrome' };
}

/** A command as a client sends it. */
export interface CdpCommand {
  id: number;
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

/** Parses one client message; null when it is not a CDP command. */
export function parseCdpCommand(text: string): CdpCommand | { id: number | null; invalid: true } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { id: null, invalid: true };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { id: null, invalid: true };
  const { id, method, params, sessionId } = value as Record<string, unknown>;
  const validId = typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? id : null;
  if (validId === null || typeof method !== 'string' || !/^[A-Za-z]+\.[A-Za-z]+$/.test(method)) return { id: validId, invalid: true };
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return { id: validId, invalid: true };
  if (sessionId !== undefined && typeof sessionId !== 'string') return { id: validId, invalid: true };
  return { id: validId, method, params: (params as Record<string, unknown> | undefined) ?? {}, ...(sessionId === undefined ? {} : { sessionId }) };
}

/**
 * `params` with the device's context as `browserContextId`, or null when the client named
 * another context. In a browser that is the device, the default context is meant.
 */
export function inDeviceContext(scope: CdpScope, params: Record<string, unknown>): Record<string, unknown> | null {
  const named = params.browserContextId;
  if (named !== undefined && named !== scope.contextId) return null;
  const { browserContextId: _omitted, ...rest } = params;
  return scope.contextId === null ? rest : { ...rest, browserContextId: scope.contextId };
}
