import { asksToReconnect, reconnectDelayMs } from './reconnect-on-restart.js';

/** A screencast frame of the device's page. `data` is base64 JPEG. */
export interface LiveFrame {
  format: 'jpeg';
  data: string;
  width: number;
  height: number;
}

/** An input to the page, through a `control` session. */
export type LiveInput =
  | { kind: 'click'; x: number; y: number; button?: 'left' | 'right' | 'middle' }
  | { kind: 'move'; x: number; y: number }
  | { kind: 'scroll'; x: number; y: number; dx: number; dy: number }
  | { kind: 'key'; key: string }
  | { kind: 'text'; text: string };

/** The first message of the socket. */
export interface LiveReady {
  type: 'ready';
  session_id: string;
  device_id: string;
  [field: string]: unknown;
}

/** An input the service refused (the socket stays open). */
export interface LiveRefusal {
  type: 'error';
  code: string;
  message: string;
}

/** What `sessions.connect()` needs of a session: its `ws_url` and the `session_token` shown once at creation. */
export interface ConnectableSession {
  ws_url: string;
  session_token: string;
}

/** The WebSocket constructor to use (the global one of Node 22+ and browsers, or `ws`'s). */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocket;

/**
 * A reconnection of the live view: `reconnecting` when the service asked for one (close
 * code 1012: it restarts, or hands the device to another instance) or an attempt failed,
 * with the wait before attempt number `attempt`; `reconnected` when a socket is ready again
 * and frames resume, after `attempt` attempts.
 */
export type LiveReconnect = { type: 'reconnecting'; attempt: number; delayMs: number } | { type: 'reconnected'; attempt: number };

const SUBPROTOCOL = 'svc.operator.v1';
const TOKEN_PREFIX = 'svc.token.';

/**
 * A live view of a device: iterate it for frames, `send()` inputs (control sessions),
 * `close()` when done. Refused inputs arrive on `onRefusal`. When the service closes the
 * socket with 1012 (`service_restart`) the view opens it again by itself with the same
 * token, 250 ms doubling to 5 s between attempts, for up to 12 attempts and never past the
 * session's expiry, and frames resume; `onReconnect` tells each step. The iteration ends
 * when the socket closes for any other reason or the attempts run out
 * (`closeCode`/`closeReason` then say why, e.g. 4410 `session_expired`).
 */
export class LiveView implements AsyncIterable<LiveFrame> {
  readonly ready: Promise<LiveReady>;
  closeCode: number | undefined;
  closeReason: string | undefined;
  onRefusal: ((refusal: LiveRefusal) => void) | undefined;
  onReconnect: ((event: LiveReconnect) => void) | undefined;
  private readonly frames: LiveFrame[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private closedByCaller = false;
  private socket: WebSocket;
  /** Attempts made since the service asked to reconnect; 0 while a socket works. */
  private attempts = 0;
  private retry: ReturnType<typeof setTimeout> | undefined;
  /** The session's end (from `ready`): no attempt is made past it. */
  private expiresAt = Number.POSITIVE_INFINITY;
  private resolveReady!: (ready: LiveReady) => void;
  private rejectReady!: (error: Error) => void;

  private constructor(
    private readonly session: ConnectableSession,
    private readonly WebSocketClass: WebSocketConstructor,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => undefined);
    this.socket = this.openSocket();
  }

  static open(session: ConnectableSession, WebSocketClass: WebSocketConstructor): LiveView {
    return new LiveView(session, WebSocketClass);
  }

  private openSocket(): WebSocket {
    const socket = new this.WebSocketClass(this.session.ws_url, [SUBPROTOCOL, `${TOKEN_PREFIX}${this.session.session_token}`]);
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { type: string };
      if (message.type === 'ready') this.onReady(message as LiveReady);
      else if (message.type === 'frame') {
        const { type: _type, ...frame } = message as LiveFrame & { type: string };
        this.frames.push(frame);
        // Keep only the newest frames when the reader is slow.
        if (this.frames.length > 10) this.frames.splice(0, this.frames.length - 10);
      } else if (message.type === 'error') this.onRefusal?.(message as LiveRefusal);
      this.wake?.();
    });
    socket.addEventListener('close', (event) => {
      if (socket === this.socket) this.onClosed(event.code, event.reason);
    });
    socket.addEventListener('error', () => undefined);
    return socket;
  }

  private onReady(ready: LiveReady): void {
    if (typeof ready.expires_at === 'string') this.expiresAt = Date.parse(ready.expires_at);
    if (this.attempts > 0) this.onReconnect?.({ type: 'reconnected', attempt: this.attempts });
    this.attempts = 0;
    this.resolveReady(ready);
  }

  /**
   * The socket closed. Reconnect when the service asked to, or when an attempt to did not
   * get through (the service may still be starting); otherwise the view ends.
   */
  private onClosed(code: number, reason: string): void {
    const reconnecting = !this.closedByCaller && (asksToReconnect(code) || this.attempts > 0);
    const delayMs = reconnecting && Date.now() < this.expiresAt ? reconnectDelayMs(this.attempts) : null;
    if (delayMs === null) return this.end(code, reason);
    this.attempts += 1;
    this.onReconnect?.({ type: 'reconnecting', attempt: this.attempts, delayMs });
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.socket = this.openSocket();
    }, delayMs);
  }

  private end(code: number, reason: string): void {
    this.closed = true;
    this.closeCode = code;
    this.closeReason = reason;
    this.rejectReady(new Error(`live view closed before it was ready: ${code} ${reason}`));
    this.wake?.();
  }

  /**
   * Sends an input to the page (needs a `control` session). While the view reconnects it
   * throws: an input meant for the page as last seen is not held for a later one.
   */
  async send(input: LiveInput): Promise<void> {
    await this.ready;
    if (this.attempts > 0) throw new Error('The live view is reconnecting; send the input again once it is back (see onReconnect).');
    this.socket.send(JSON.stringify({ type: 'input', input }));
  }

  close(): void {
    this.closedByCaller = true;
    if (this.retry === undefined) return this.socket.close(1000);
    // Between two attempts there is no socket to close.
    clearTimeout(this.retry);
    this.retry = undefined;
    this.end(1000, '');
  }

  async *[Symbol.asyncIterator](): AsyncIterator<LiveFrame> {
    for (;;) {
      const frame = this.frames.shift();
      if (frame !== undefined) {
        yield frame;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
