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

const SUBPROTOCOL = 'svc.operator.v1';
const TOKEN_PREFIX = 'svc.token.';

/**
 * A live view of a device: iterate it for frames, `send()` inputs (control sessions),
 * `close()` when done. Refused inputs arrive on `onRefusal`; the iteration ends when the
 * socket closes (`closeCode`/`closeReason` then say why, e.g. 4410 `session_expired`).
 */
export class LiveView implements AsyncIterable<LiveFrame> {
  readonly ready: Promise<LiveReady>;
  closeCode: number | undefined;
  closeReason: string | undefined;
  onRefusal: ((refusal: LiveRefusal) => void) | undefined;
  private readonly frames: LiveFrame[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(private readonly socket: WebSocket) {
    let resolveReady!: (ready: LiveReady) => void;
    let rejectReady!: (error: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    this.ready.catch(() => undefined);
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { type: string };
      if (message.type === 'ready') resolveReady(message as LiveReady);
      else if (message.type === 'frame') {
        const { type: _type, ...frame } = message as LiveFrame & { type: string };
        this.frames.push(frame);
        // Keep only the newest frames when the reader is slow.
        if (this.frames.length > 10) this.frames.splice(0, this.frames.length - 10);
      } else if (message.type === 'error') this.onRefusal?.(message as LiveRefusal);
      this.wake?.();
    });
    socket.addEventListener('close', (event) => {
      this.closed = true;
      this.closeCode = event.code;
      this.closeReason = event.reason;
      rejectReady(new Error(`live view closed before it was ready: ${event.code} ${event.reason}`));
      this.wake?.();
    });
    socket.addEventListener('error', () => undefined);
  }

  static open(session: ConnectableSession, WebSocketClass: WebSocketConstructor): LiveView {
    return new LiveView(new WebSocketClass(session.ws_url, [SUBPROTOCOL, `${TOKEN_PREFIX}${session.session_token}`]));
  }

  /** Sends an input to the page (needs a `control` session). */
  async send(input: LiveInput): Promise<void> {
    await this.ready;
    this.socket.send(JSON.stringify({ type: 'input', input }));
  }

  close(): void {
    this.socket.close(1000);
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
