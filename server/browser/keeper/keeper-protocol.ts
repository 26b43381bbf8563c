// What the service and a browser keeper (keeper-process.ts) say to each other. Read by
// both sides: it is bundled into the keeper (keeper-script.ts), so it imports nothing.
//
// On the keeper's Unix socket every message is one JSON text followed by a NUL byte, as
// on Chromium's DevTools pipe. CDP messages pass through (their ids remapped, see
// cdp-relay.ts); a message whose first field is `keeper` is for the keeper itself.

/** How a keeper control message starts: JSON.stringify writes the `keeper` field first. */
export const CONTROL_PREFIX = '{"keeper":';

/** Who the keeper is and what it keeps: its answer to `hello`. */
export interface KeeperIdentity {
  deviceId: string;
  /** Random, fixed for the life of this browser: a page built before is still there when it matches. */
  incarnation: string;
  /** The local Chromium's pid (it leads its process group); null for a remote browser. */
  pid: number | null;
  /** The uid the local Chromium runs as (the keeper holds its claim); null otherwise. */
  uid: number | null;
  /** browserless: the id in /devtools/browser/<id> another client may join; null when unknown. */
  remoteBrowserId: string | null;
  /** browserless: the device's browser context in that browser; null until the service names it. */
  contextId: string | null;
  /**
   * The egress proxy the browser (or the device's context) was told to use: a service
   * whose proxy listens elsewhere cannot re-attach to it, its pages would reach nothing.
   */
  egressUrl: string | null;
}

export type KeeperRequest =
  | { keeper: 'hello' }
  /** Closes the browser for good (local: Browser.close, then the process group is killed), then exits. */
  | { keeper: 'close' }
  /**
   * Ends the browser of a device whose profile is deleted next, then exits: nothing needs
   * flushing, so a local Chromium's process group is killed without a Browser.close (whose
   * shutdown cost a fifth of a second of CPU). A remote browser is closed as by `close`.
   */
  | { keeper: 'discard' }
  /** Leaves the browser without closing it (another host joined it), then exits. */
  | { keeper: 'release' }
  /** Notes what another host needs to join the remote browser, for later hellos. */
  | { keeper: 'remember'; remoteBrowserId: string | null; contextId: string | null };

export type KeeperReply =
  | ({ keeper: 'hello' } & KeeperIdentity)
  /** Another client is connected: one client at a time drives the browser. */
  | { keeper: 'busy' };

interface KeeperStartCommon {
  deviceId: string;
  socketPath: string;
  /** With no service connected, how long the keeper waits for one before it closes its browser. */
  keepSecs: number;
  /** Kept when joining a browser that already has one (adoption); else the keeper makes one. */
  incarnation: string | null;
  egressUrl: string | null;
}

/** A local Chromium the keeper starts with --remote-debugging-pipe (the command of chromium-command.ts). */
export interface LocalKeeperStart extends KeeperStartCommon {
  kind: 'local';
  executablePath: string;
  args: string[];
  env: Record<string, string>;
  uid: number | null;
  /** Browser.close may take this long to flush the profile before the process group is killed. */
  gracefulCloseMs: number;
}

/** A remote browser the keeper holds a WebSocket to (the URL carries the token: never logged). */
export interface RemoteKeeperStart extends KeeperStartCommon {
  kind: 'remote';
  endpoint: string;
  connectTimeoutMs: number;
  remoteBrowserId: string | null;
  contextId: string | null;
}

/** Written by the service on the keeper's stdin, once. */
export type KeeperStart = LocalKeeperStart | RemoteKeeperStart;

/** Why a remote browser could not be reached: the endpoint is full, its handshake timed out, or anything else. */
export type KeeperStartFailure = 'busy' | 'timeout' | 'failed';

/** A remote browser's WebSocket that could not be opened, and why (websocket-client.ts). */
export class WebSocketOpenError extends Error {
  readonly reason: KeeperStartFailure;
  constructor(reason: KeeperStartFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The one line the keeper writes on its stdout once it serves its socket, or gave up. */
export type KeeperStartResult = { ready: true } | { ready: false; reason: KeeperStartFailure; message: string };
