// The service's end of a browser keeper's socket (keeper/keeper-protocol.ts): the hello
// that says whose browser it keeps, puppeteer's transport for the CDP messages, and the
// requests to close or leave the browser.
import { createConnection, type Socket } from 'node:net';
import type { ConnectionTransport } from 'puppeteer-core';
import { CONTROL_PREFIX, type KeeperIdentity, type KeeperReply, type KeeperRequest } from './keeper/keeper-protocol.js';
import { NulFrameReader, nulFrame } from './keeper/nul-frames.js';
import { keeperSocket, keeperSocketIds, removeKeeperSocket } from './keeper-directory.js';

/** A keeper answered that another service drives its browser. */
export class KeeperBusyError extends Error {
  constructor(readonly deviceId: string) {
    super(`the browser keeper of ${deviceId} is serving another client`);
    this.name = 'KeeperBusyError';
  }
}

const HELLO_TIMEOUT_MS = 5_000;
/** How long a close may take: Browser.close's grace, the group kill, and a margin. */
const CLOSE_TIMEOUT_MS = 15_000;

export class KeeperConnection implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  /** Resolves once the socket is closed, whichever side closed it (a keeper that exits closes it). */
  readonly closed: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    readonly identity: KeeperIdentity,
    reader: NulFrameReader,
  ) {
    socket.on('data', (chunk: Buffer) => {
      for (const message of reader.push(chunk)) if (!message.startsWith(CONTROL_PREFIX)) this.onmessage?.(message);
    });
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        resolve();
        this.onclose?.();
      }),
    );
  }

  /**
   * Connects to the keeper listening on `socketPath` and asks who it is; null when none
   * listens there (no socket, or one a dead keeper left). Throws KeeperBusyError when
   * another client holds it.
   */
  static async open(socketPath: string, deviceId: string): Promise<KeeperConnection | null> {
    const socket = await new Promise<Socket | null>((resolve) => {
      const attempt = createConnection(socketPath);
      attempt.once('connect', () => {
        attempt.removeAllListeners('error');
        resolve(attempt);
      });
      attempt.once('error', () => resolve(null));
    });
    if (socket === null) return null;
    socket.on('error', () => undefined);
    const reader = new NulFrameReader();
    const reply = await new Promise<KeeperReply | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), HELLO_TIMEOUT_MS);
      const onData = (chunk: Buffer) => {
        const first = reader.push(chunk).find((message) => message.startsWith(CONTROL_PREFIX));
        if (first === undefined) return;
        clearTimeout(timer);
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(JSON.parse(first) as KeeperReply);
      };
      const onClose = () => {
        clearTimeout(timer);
        resolve(null);
      };
      socket.on('data', onData);
      socket.once('close', onClose);
      socket.write(nulFrame(JSON.stringify({ keeper: 'hello' } satisfies KeeperRequest)));
    });
    if (reply?.keeper === 'busy') {
      socket.destroy();
      throw new KeeperBusyError(deviceId);
    }
    if (reply === null || reply.deviceId !== deviceId) {
      socket.destroy();
      return null;
    }
    const { keeper: _hello, ...identity } = reply;
    return new KeeperConnection(socket, identity, reader);
  }

  /** puppeteer's ConnectionTransport. */
  send(message: string): void {
    this.socket.write(nulFrame(message));
  }

  /** Drops the connection, leaving the browser to its keeper (puppeteer's disconnect ends here too). */
  close(): void {
    this.socket.end();
  }

  /** Notes what another host needs to join the browser; later hellos answer it. */
  remember(remoteBrowserId: string | null, contextId: string | null): void {
    this.request({ keeper: 'remember', remoteBrowserId, contextId });
  }

  /** Closes the browser for good; resolves once the keeper has exited (or after CLOSE_TIMEOUT_MS). */
  closeBrowser(): Promise<void> {
    return this.finish({ keeper: 'close' });
  }

  /** Ends the browser of a profile deleted next (keeper-protocol.ts, `discard`); resolves as closeBrowser(). */
  discardBrowser(): Promise<void> {
    return this.finish({ keeper: 'discard' });
  }

  /** Leaves the browser running for whoever else holds it, and ends the keeper. */
  releaseBrowser(): Promise<void> {
    return this.finish({ keeper: 'release' });
  }

  private async finish(request: KeeperRequest): Promise<void> {
    this.request(request);
    const timer = setTimeout(() => this.socket.destroy(), CLOSE_TIMEOUT_MS);
    await this.closed;
    clearTimeout(timer);
  }

  private request(request: KeeperRequest): void {
    if (!this.socket.destroyed) this.socket.write(nulFrame(JSON.stringify(request)));
  }
}

/**
 * The identities of the keepers alive in `dir`, each asked once; sockets nobody answers
 * on are removed. A keeper serving another client counts as alive.
 */
export async function liveKeepers(dir: string): Promise<Map<string, KeeperIdentity | null>> {
  const found = new Map<string, KeeperIdentity | null>();
  for (const deviceId of await keeperSocketIds(dir)) {
    try {
      const connection = await KeeperConnection.open(keeperSocket(dir, deviceId), deviceId);
      if (connection === null) {
        await removeKeeperSocket(dir, deviceId);
        continue;
      }
      found.set(deviceId, connection.identity);
      connection.close();
      await connection.closed;
    } catch (error) {
      if (!(error instanceof KeeperBusyError)) throw error;
      found.set(deviceId, null);
    }
  }
  return found;
}
