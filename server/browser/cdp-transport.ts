import type { ConnectionTransport } from 'puppeteer-core';
import WebSocket from 'ws';

/**
 * Why a CDP WebSocket did not open: the endpoint said it is full (`busy`: HTTP 429 or
 * 503 to the upgrade, as browserless answers when its concurrency and queue are
 * used up), the handshake did not finish in time (`timeout`: browserless holds the
 * upgrade of a queued connection until a browser frees up), or anything else (`failed`).
 */
export class CdpConnectError extends Error {
  constructor(
    readonly reason: 'busy' | 'timeout' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'CdpConnectError';
  }
}

const BUSY_STATUSES = new Set([429, 503]);
/** How long close() lets the other side answer the closing handshake before dropping the socket. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Opens a CDP WebSocket for puppeteer.connect({ transport }), with the handshake bounded
 * by `handshakeTimeoutMs`: puppeteer's own transport waits as long as the server holds
 * the upgrade. Socket options are puppeteer's (no compression, 256 MiB frames).
 */
export function openCdpTransport(url: string, handshakeTimeoutMs: number): Promise<CdpTransport> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [], { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024, allowSynchronousEvents: false });
    const fail = (error: CdpConnectError) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      // A refused or abandoned handshake has nothing left to say; errors after this are noise.
      socket.on('error', () => undefined);
      socket.terminate();
      reject(error);
    };
    const timer = setTimeout(() => fail(new CdpConnectError('timeout', `the CDP handshake took longer than ${handshakeTimeoutMs} ms`)), handshakeTimeoutMs);
    socket.once('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 0;
      response.resume();
      fail(new CdpConnectError(BUSY_STATUSES.has(status) ? 'busy' : 'failed', `the CDP endpoint answered the upgrade with HTTP ${status}`));
    });
    socket.once('error', () => fail(new CdpConnectError('failed', 'the CDP WebSocket could not be opened')));
    socket.once('open', () => {
      clearTimeout(timer);
      socket.removeAllListeners();
      resolve(new CdpTransport(socket));
    });
  });
}

/** puppeteer's ConnectionTransport over an open socket, telling when the socket has closed. */
export class CdpTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  /** Resolves once the socket is closed, whichever side closed it. */
  readonly closed: Promise<void>;

  constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => this.onmessage?.(data.toString()));
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        resolve();
        this.onclose?.();
      }),
    );
    // Errors end in 'close', which is what puppeteer hears about.
    socket.on('error', () => undefined);
  }

  send(message: string): void {
    this.socket.send(message);
  }

  /** Starts the closing handshake; `closed` resolves within CLOSE_GRACE_MS whatever the other side does. */
  close(): void {
    this.socket.close();
    setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS).unref();
  }
}
