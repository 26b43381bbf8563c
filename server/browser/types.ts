// The browser layer's public contract. Everything outside server/browser/ talks to
// browsers through these types only; puppeteer-core is imported nowhere else.
import type { TargetFingerprint } from './in-page/fingerprint-match.js';

/** An element the agent may act on, as listed in an observation. */
export interface InteractiveElement {
  /** Unique within one observation, across frames; actions may target `{ ref }`. */
  ref: number;
  /** ARIA role or tag-derived role: button, link, textbox, checkbox, combobox, ... */
  role: string;
  /** Accessible name or visible text, trimmed and clamped to 80 characters. */
  name: string;
  tag: string;
  /** Current value of form fields (never of password fields). */
  value?: string;
}

export interface PageObservation {
  url: string;
  title: string;
  /**
   * Compact list of interactive elements, at most 150: the main document's first, then
   * those of each visible iframe; open shadow roots count as part of their document.
   */
  elements: InteractiveElement[];
  /** JPEG as base64, only when requested. */
  screenshot?: string;
}

/** A target is visible text or a CSS selector (offline language), or an element ref. */
export type ActionTarget = string | { ref: number };

export type { TargetFingerprint };

/**
 * Where the element a fingerprint describes is on the page now: a target the next action
 * may use, or why there is none (nothing matches, or two elements match equally well).
 */
export type LocatedTarget = { status: 'found'; target: ActionTarget } | { status: 'missing' | 'ambiguous' };

export type ActionErrorCode =
  | 'target_not_found'
  | 'navigation_failed'
  | 'domain_not_allowed'
  | 'destination_blocked'
  | 'timeout'
  | 'browser_gone'
  | 'page_crashed'
  | 'download_failed'
  | 'download_too_large';

/**
 * The egress proxy in front of every device's browser (server/net/egress-proxy.ts), as
 * the browser layer uses it: the address browsers are told to use, and whether it refused
 * a destination, so a failed navigation is reported as blocked rather than as broken.
 */
export interface EgressGate {
  /** `http://<address>:<port>`, for --proxy-server or a browser context's proxy. */
  readonly url: string;
  /** The credential a device's browser must prove itself with; null when none is asked (a proxy on loopback). */
  credentialsFor(deviceId: string): { username: string; password: string } | null;
  refusedSince(url: string, sinceMs: number): Promise<boolean>;
}

/** Typed failure of one page action; the agent maps `code` to a task failure code. */
export class ActionError extends Error {
  constructor(
    readonly code: ActionErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ActionError';
  }
}

/** Drives the single page of one device. Every method throws ActionError on failure. */
/**
 * What an action does to the page's pictures: a wait only watches; a change may repaint
 * (a click on an inert spot does not); typing repaints with its last key, on a loaded host
 * after its end (FrameTimeline.shown).
 */
export type PageEffect = 'watches' | 'changes' | 'types';

/**
 * Awaited by an action just before it starts to change or watch the page, told what it
 * does; an action that needs a target finds it meanwhile (finding changes nothing).
 * Throwing refuses the action.
 */
export type EffectGate = (effect: PageEffect) => Promise<void>;

/**
 * A task's page. An action that changes it (navigate, click, type, press, scroll) ends
 * once the page took it; painted() then says when the page has painted it, and the next
 * action that changes or watches the page starts only after that. Each action awaits its
 * `gate`, if given, before its effect starts.
 */
export interface PageDriver {
  /** The page as a planner sees it; `elements: false` reads only its URL and title (no walk of the page). */
  observe(options?: { screenshot?: boolean; elements?: boolean }): Promise<PageObservation>;
  /** Resolves once the page has painted what the last action that changed it did (at once when that is done). */
  painted(): Promise<void>;
  /**
   * When the page's main frame last navigated (to a new document or within its own), in ms
   * since the epoch, 0 before any: a step that navigated is shown by a frame drawn after it.
   */
  navigatedAt(): number;
  navigate(url: string, gate?: EffectGate): Promise<void>;
  click(target: ActionTarget, gate?: EffectGate): Promise<void>;
  /**
   * Types into a field. `secret`: the text is a credential; a field that does not mask
   * itself (anything but a password input) is masked with CSS first, so the live view and
   * recordings show discs, not the value.
   */
  type(text: string, into: ActionTarget, options?: { secret?: boolean }, gate?: EffectGate): Promise<void>;
  press(key: string, gate?: EffectGate): Promise<void>;
  scroll(direction: 'up' | 'down', gate?: EffectGate): Promise<void>;
  waitForText(text: string, timeoutMs: number, gate?: EffectGate): Promise<void>;
  /** innerText of the first element matching a CSS selector. */
  textOf(selector: string): Promise<string>;
  /** innerText of every element matching a CSS selector in the main frame, in document order (at most 1,000). */
  textsOf(selector: string): Promise<string[]>;
  /** A JPEG (quality 60) of the viewport as it is now: each step's screenshot. */
  screenshot(): Promise<Buffer>;
  /**
   * Clicks the target and waits for the download it starts to finish; the file is left
   * in the browser's downloads folder for the caller to take (and remove `folder`).
   */
  download(target: ActionTarget, limits: DownloadLimits, gate?: EffectGate): Promise<DownloadedFile>;
  /**
   * Hard allow-list for navigations and subresource requests; an entry allows its
   * subdomains. null or [] means unrestricted. A main-frame navigation blocked while
   * an action runs, or after it ended, makes that action (or the next) throw
   * ActionError('domain_not_allowed'); one the egress proxy refused, 'destination_blocked'.
   * Called as each run starts: a navigation blocked before it is forgotten.
   */
  setAllowedDomains(domains: string[] | null): Promise<void>;
  /**
   * What identifies the element `target` names, found as a click (`click`) or typing
   * (`field`) would find it, for the replay cache; null when it is inside a frame (the
   * cache replays main-document targets only). Throws target_not_found like the action.
   */
  fingerprint(target: ActionTarget, purpose: 'click' | 'field'): Promise<TargetFingerprint | null>;
  /** The element of the main document `fingerprint` describes, as the target of the next action. */
  locate(fingerprint: TargetFingerprint): Promise<LocatedTarget>;
}

export interface DownloadLimits {
  /** Past this many bytes the download is canceled (download_too_large). */
  maxBytes: number;
  /** For the download to start and finish. */
  timeoutMs: number;
}

/** A finished download, still in the browser's downloads folder (which the browser's uid may write). */
export interface DownloadedFile {
  file: string;
  /** The folder made for this download; the caller removes it. */
  folder: string;
  /** The name the page or server suggested: untrusted text. */
  suggestedName: string;
  size: number;
}

/** One screencast frame of a device's page. */
export interface LiveFrame {
  /** The image as JPEG, base64-encoded; it may be scaled down from the viewport. */
  data: string;
  /** Viewport size in CSS pixels: the space input coordinates are given in. */
  width: number;
  height: number;
  /** When the compositor produced it (ms since the epoch, this machine's clock): what it can show happened before. */
  swappedAt: number;
}

/** Human input relayed from a control session; coordinates are viewport CSS pixels. */
export type LiveInput =
  | { kind: 'click'; x: number; y: number; button: 'left' | 'right' | 'middle' }
  | { kind: 'move'; x: number; y: number }
  | { kind: 'scroll'; x: number; y: number; dx: number; dy: number }
  /** One key by its name as in KeyboardEvent.key: `Enter`, `Tab`, `a`, `ArrowDown`, ... */
  | { kind: 'key'; key: string }
  /** Text typed into whatever has focus. */
  | { kind: 'text'; text: string };

/** Input the page cannot take as given (an unknown key name); nothing was sent. */
export class InvalidLiveInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidLiveInputError';
  }
}

/**
 * Who a screencast is for, which decides its frames' size: `recording`, a recorder alone
 * (a video of a few frames per second and the steps' pictures), or `people`, someone
 * watching live (full size and quality).
 */
export type ScreencastAudience = 'recording' | 'people';

/** A live view of a device's page: screencast frames out, human input in. */
export interface LiveView {
  /**
   * Calls `listener` with every new frame, and at once with the latest one if there is
   * one. Returns the function that unregisters it.
   */
  onFrame(listener: (frame: LiveFrame) => void): () => void;
  /** Dispatches one input; InvalidLiveInputError for input the page cannot take. */
  input(event: LiveInput): Promise<void>;
  /** Sizes the frames for `audience` from now on (a no-op when they already are). */
  setAudience(audience: ScreencastAudience): Promise<void>;
  /**
   * Calls `listener` once the page it shows is gone (closed, or its renderer crashed): no
   * frame comes any more, and the page that replaces it needs a view of its own.
   */
  onEnded(listener: () => void): void;
  /**
   * Makes the compositor draw the page as it is now, which the screencast sends like any
   * other frame: a still page sends none by itself, so a frame produced before someone
   * could tell it was there is followed by one that surely shows what it did. Resolves
   * once that frame is sent to the view's listeners, or a bounded wait passed.
   */
  repaint(): Promise<void>;
  /** Stops the screencast; idempotent. */
  close(): Promise<void>;
}

/**
 * Whose DevTools connection a channel serves: a client's (it may have the Stagehand
 * extension loaded, for as long as it lasts), or that extension worker's own connection,
 * beside its client's.
 */
export type CdpChannelRole = 'client' | 'extension_worker';

/** Why a CDP channel ended on the browser's side. */
export type CdpChannelEnd = 'browser_gone' | 'client_closed_browser';

/**
 * A customer's DevTools connection to a device's browser (docs/api.md, "CDP access"):
 * the client's messages in, the browser's answers and events out, under the rules of
 * cdp-rules.ts.
 */
export interface CdpChannel {
  /** One text message of the client. */
  receive(message: string): void;
  /** Detaches the client's sessions; the device's browser and pages stay. Idempotent. */
  close(): Promise<void>;
}

/** One running browser that belongs to exactly one device. */
export interface BrowserHandle {
  readonly deviceId: string;
  /** OS process id for the local provider; null for browserless. */
  readonly pid: number | null;
  /**
   * Random, fixed for the life of this browser (its keeper's): a page or state built
   * under the same incarnation is still there after a service restart.
   */
  readonly incarnation: string;
  /** This service joined a browser that was already running (kept across a restart, or adopted). */
  readonly reattached: boolean;
  /**
   * What another host needs to join this browser (LaunchRequest.adopt), to be kept with
   * the device; null when no other host can (a local Chromium, a raw DevTools endpoint).
   */
  readonly location: string | null;
  /** The page the agent drives, created on first use and reused afterwards. */
  page(): Promise<PageDriver>;
  /** A new live view of that same page (the one the agent drives), its frames sized for `audience`. */
  liveView(audience: ScreencastAudience): Promise<LiveView>;
  /**
   * A new live view of the device's page opened last and still open, following each page
   * that opens: what a CDP client drives (following-live-view.ts).
   */
  followingLiveView(): Promise<LiveView>;
  /**
   * A DevTools channel for a customer's client, confined to this device. `deliver` gets
   * each message for the client; `onEnd` is called once if the browser side ends it.
   */
  openCdpChannel(deliver: (message: string) => void, onEnd: (reason: CdpChannelEnd) => void, role?: CdpChannelRole): Promise<CdpChannel>;
  /**
   * Whether a WebSocket handshake with this Sec-WebSocket-Key was sent by the Stagehand
   * extension's worker in this browser (docs/api.md, "Stagehand 4"); a key admits once.
   */
  isExtensionWorkerHandshake(key: string | undefined): Promise<boolean>;
  /** Called once when the browser goes away without close() being called. */
  onDisconnected(listener: () => void): void;
  /** Closes the browser, keeping the profile for a later launch. */
  close(): Promise<void>;
  /**
   * Ends the browser of a device whose profile is deleted next: nothing of it is kept, so
   * nothing is saved or flushed first (a local Chromium is killed; a browserless device's
   * state is not saved). Like close() for the disconnect listeners.
   */
  discard(): Promise<void>;
  /**
   * Lets go of the browser without closing it: it keeps running under its keeper until a
   * service re-attaches (or the keeper reaps it, docs/architecture.md "Process model").
   */
  detach(): Promise<void>;
}

export interface LaunchRequest {
  deviceId: string;
  orgId: string;
  /**
   * Join the running browser at this location (a handle's `location`, stored by another
   * host) instead of starting one: browserless only, for a device whose host is gone.
   */
  adopt?: string;
}

export interface BrowserProvider {
  readonly kind: 'local' | 'browserless';
  /**
   * Checks, once and before any launch, what the provider needs (executable, sandbox),
   * throwing BrowserLaunchError with one clear line when it cannot run. Returns warning
   * lines for the service's log.
   */
  start(): Promise<string[]>;
  /**
   * Re-attaches to the device's kept browser when its keeper lives (same incarnation,
   * same pages), joins the browser at `adopt`, or starts a new one on the persistent profile.
   */
  launch(request: LaunchRequest): Promise<BrowserHandle>;
  /** Removes everything kept for the device (profile directory or remote profile). */
  destroyProfile(deviceId: string): Promise<void>;
  /** The devices something is kept for (profile directories, saved states), whatever their browser's state. */
  profileIds(): Promise<string[]>;
  /** Closes every browser this provider runs, for good. */
  shutdown(): Promise<void>;
  /** Lets go of every browser this provider runs, leaving each running under its keeper (a hand-over). */
  detach(): Promise<void>;
  /** Devices of this data directory whose browser a live keeper keeps and this provider has not attached. */
  keptDeviceIds(): Promise<string[]>;
  /** Closes a kept browser this provider has not attached (its device is no longer this host's). */
  closeKept(deviceId: string): Promise<void>;
  /** Whether a browser could be started now (the executable is there, the endpoint answers); for /readyz. */
  isReachable(): Promise<boolean>;
  /** Browsers launched ahead of a create (local provider only); null when the provider keeps none. */
  readonly warm: WarmLauncher | null;
}

/**
 * Launches browsers before any device asks, on fresh profiles that belong to no device
 * and no organization yet (the pool's warm browsers). A warm profile is marked as such
 * until it is handed over, so a restart removes the profiles no device took.
 */
export interface WarmLauncher {
  /** A browser on a new, empty, marked profile named `profileId` (a device id to be). */
  launch(profileId: string): Promise<BrowserHandle>;
  /** The profile is now the device's of the same id: unmarked, kept across sleep, wake and restarts. */
  handOver(profileId: string): Promise<void>;
  /** Removes the profile of a warm browser no device took (after its browser closed). */
  discard(profileId: string): Promise<void>;
}

/** Infrastructure failure of a launch; `retryable` tells callers whether to try again. */
export class BrowserLaunchError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'BrowserLaunchError';
  }
}
