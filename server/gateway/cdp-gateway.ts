import type { IncomingMessage } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { WebSocket } from 'ws';
import type { ActiveRecording, FrameSource } from '../artifacts/recorder';
import type { BrowserHandle, CdpChannel } from '../browser';
import type { CdpCloseReason } from '../../db/schema';
import { ApiError } from '../core/errors';
import {
  awaitCdpReconnect,
  claimCdpConnection,
  closeAbandonedCdpConnections,
  endedCdpConnections,
  endUnresumableCdpConnections,
  heartbeatCdpConnections,
  releaseCdpConnection,
  type CdpDisconnectReason,
} from '../domain/cdp/cdp-connection';
import type { CdpSessionRow } from '../domain/cdp/cdp-session-resource';
import { PeriodicTimer } from '../domain/periodic-timer';
import type { CallerOf } from '../http/resolve-caller';
import type { Services } from '../services/services';
import { asksToReconnect } from '../../shared/reconnect-on-restart';
import { DeviceSocketGateway, RECONNECT_CLOSES, type Admission, type ReconnectReason } from './device-socket-gateway';
import { RELAYED_HEADER, RELAYED_KEY_HEADER } from './session-relay';

/** A client's message (a command); the browser's answers may be larger. */
const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Answers and events a client has not read yet; past this it is too slow and is cut off. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** Deletion, expiry, a deleted or lost device: noticed within this. */
const CHECK_MS = 1_000;
/**
 * How often this instance renews its connections and closes other instances' abandoned
 * ones, and connections waiting for their client to come back that no longer may.
 */
const HEARTBEAT_MS = 10_000;
/**
 * How long a handshake for a session connected here waits for that connection to end: a
 * client that disconnects and connects again at once (Puppeteer's disconnect() resolves
 * before the service sees the close) is usually ahead of its own close frame.
 */
const RECONNECT_GRACE_MS = 2_000;

/**
 * Close frames the client gets, by why its session ended. A connection can also end with
 * its session still open (CdpDisconnectReason): 1000 `closed` after Browser.close or a
 * client too slow to read, RECONNECT_CLOSES at a stop or a hand-over of the device.
 */
const CLOSE_REASONS: Record<CdpCloseReason, { code: number; reason: string }> = {
  // Also the frame of a connection whose client left (Browser.close) with its session open;
  // as a session's close reason only in rows of earlier versions, which ended sessions so.
  client_closed: { code: 1000, reason: 'closed' },
  deleted: { code: 4001, reason: 'cdp_session_deleted' },
  expired: { code: 4002, reason: 'cdp_session_expired' },
  key_revoked: { code: 4003, reason: 'key_revoked' },
  device_gone: { code: 4004, reason: 'device_gone' },
  host_lost: { code: 1011, reason: 'host_lost' },
};

interface Connection {
  row: CdpSessionRow;
  socket: WebSocket;
  channel: CdpChannel;
  stopWatchingKey: () => void;
  /** What the device's page shows while the connection is open (issue 14: every CDP session is recorded). */
  recording: Promise<ActiveRecording>;
  ended: boolean;
  /** Settles when the connection ends here (#detach). */
  detached: Promise<void>;
  markDetached: () => void;
  /** The Stagehand extension worker's own connections beside this one (docs/api.md, "Stagehand 4"); they end with it. */
  workers: Set<{ socket: WebSocket; channel: CdpChannel }>;
}

function closeSocket(socket: WebSocket, close: { code: number; reason: string }): void {
  if (socket.readyState === socket.OPEN) socket.close(close.code, close.reason);
}

/**
 * The Sec-WebSocket-Key the client sent: the header itself, or, behind another instance's
 * relay (which opens a socket of its own), the one that instance passed on.
 */
function clientHandshakeKey(req: IncomingMessage): string | undefined {
  const key = req.headers[RELAYED_HEADER] === undefined ? req.headers['sec-websocket-key'] : req.headers[RELAYED_KEY_HEADER];
  return typeof key === 'string' ? key : undefined;
}

/**
 * The DevTools WebSocket of CDP sessions at `/v1/cdp_sessions/{id}/devtools?token=…` (its
 * caller: the CDP secret; the upgrade, the relay to the instance that runs the device's
 * browser and the close are DeviceSocketGateway's). Where the browser runs it uses the
 * secret, takes the device's task slot and bridges the client to the browser
 * (server/browser/cdp-bridge.ts). It ends a connection when its session is deleted or
 * expires, its key is revoked, or its device stops being active, and gives the slot back.
 */
export class CdpGateway extends DeviceSocketGateway<'cdp_secret'> {
  readonly #connections = new Map<string, Connection>();
  /** Database writes in flight (ends, pauses) and recordings stopping, so close() waits for them before the database goes. */
  readonly #releases = new Set<Promise<void>>();
  /**
   * Sessions whose connection here ended and is being marked as waiting for its client,
   * by session id: a client that reconnects at once (Playwright MCP after browser_close)
   * waits for that instead of finding its session still connected.
   */
  readonly #pausing = new Map<string, Promise<void>>();
  /**
   * What a connection's recording shows: the page opened last on the device, which is the
   * one a client's `newPage()` made, rather than the agent's page the live view shows.
   */
  readonly #clientPages: FrameSource = {
    watchFrames: async (deviceId, listener) => {
      const handle = this.services.browserPool.get(deviceId);
      if (handle === undefined) throw new Error('the device has no browser on this host');
      const view = await handle.followingLiveView();
      view.onFrame(listener);
      return { stop: () => void view.close(), repaint: () => view.repaint() };
    },
  };
  // Reports its own errors; a tick never overlaps the one before it.
  readonly #heartbeat = new PeriodicTimer(HEARTBEAT_MS, () => this.#renew(), (error) => this.services.log.error({ err: error }, 'CDP connection heartbeat failed'));

  constructor(services: Services) {
    super(services, 'CDP', { maxPayload: MAX_CLIENT_MESSAGE_BYTES, perMessageDeflate: false }, CHECK_MS);
  }

  /**
   * Closes what this host's previous process left open (its sockets died with it, unless
   * it stopped gracefully and left them waiting for their clients), then watches.
   */
  override async start(): Promise<void> {
    const closed = await closeAbandonedCdpConnections(this.services.db, this.services.hostId);
    if (closed > 0) this.services.log.info({ closed }, 'closed CDP connections of the previous run');
    super.start();
    this.#heartbeat.start();
  }

  /**
   * Its connections do not end: each is closed with 1012, its session stays open and keeps
   * the device's slot, and its client connects again with the same cdp_url, to whichever
   * instance answers next.
   */
  override async close(): Promise<void> {
    this.closed = true;
    await this.#heartbeat.stop();
    await super.close();
    await Promise.all(this.#releases);
  }

  protected get servedCount(): number {
    return this.#connections.size;
  }

  protected async admit(req: IncomingMessage, { session: seen, secret }: CallerOf['cdp_secret'], publicId: string): Promise<Admission> {
    const handle = this.services.browserPool.get(seen.deviceId);
    if (handle === undefined) throw new ApiError('device_not_ready');
    const main = this.#connections.get(seen.id);
    if (main !== undefined && (await handle.isExtensionWorkerHandshake(clientHandshakeKey(req)))) return this.#admitExtensionWorker(main, handle);
    await this.#previousConnectionGone(seen.id);
    const claimed = await claimCdpConnection(this.services.db, this.services.hostId, publicId, secret);
    let socketForChannel: WebSocket | null = null;
    const early: string[] = [];
    const channel = await handle
      .openCdpChannel(
        (message) => (socketForChannel === null ? early.push(message) : this.#deliver(claimed.id, message)),
        (reason) => {
          const connection = this.#connections.get(claimed.id);
          if (connection === undefined) return;
          if (reason === 'client_closed_browser') this.#pause(connection, 'client_closed');
          else this.#end(connection, 'device_gone');
        },
      )
      .catch(() => {
        this.#track(releaseCdpConnection(this.services.db, claimed.id, 'device_gone'));
        return Promise.reject(new ApiError('device_not_ready'));
      });
    // A relaying instance that stops closes its side with 1012, which must not end the session.
    const relayed = req.headers[RELAYED_HEADER] !== undefined;
    return {
      open: (ws) => {
        socketForChannel = ws;
        this.#open(ws, claimed, channel, relayed);
        for (const message of early) this.#deliver(claimed.id, message);
      },
      refused: () => {
        void channel.close();
        this.#track(awaitCdpReconnect(this.services.db, claimed, this.services.hostId, 'client_closed'));
      },
    };
  }

  protected reconnect(deviceId: string | null, reason: ReconnectReason): void {
    for (const connection of this.#connections.values()) if (deviceId === null || connection.row.deviceId === deviceId) this.#pause(connection, reason);
  }

  /**
   * The Stagehand extension worker's own DevTools connection, beside its client's `main`
   * one on the same session: admitted only because the device's browser sent exactly this
   * handshake (its key, seen by the service on the worker). It goes through the same rules,
   * without loading or unloading the extension, and ends with the main connection.
   */
  async #admitExtensionWorker(main: Connection, handle: BrowserHandle): Promise<Admission> {
    let ws: WebSocket | null = null;
    const early: string[] = [];
    const send = (message: string) => {
      if (ws === null) return void early.push(message);
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) return closeSocket(ws, CLOSE_REASONS.client_closed);
      ws.send(message);
    };
    const channel = await handle.openCdpChannel(send, () => ws !== null && closeSocket(ws, CLOSE_REASONS.client_closed), 'extension_worker');
    const worker = { socket: null as unknown as WebSocket, channel };
    return {
      open: (opened) => {
        ws = opened;
        worker.socket = opened;
        if (main.ended) {
          void channel.close();
          return closeSocket(opened, CLOSE_REASONS.client_closed);
        }
        main.workers.add(worker);
        for (const message of early) send(message);
        opened.on('message', (data, isBinary) => {
          if (!isBinary) channel.receive(data.toString());
        });
        opened.on('close', () => {
          main.workers.delete(worker);
          void channel.close();
        });
      },
      refused: () => void channel.close(),
    };
  }

  /**
   * A session connected here gets RECONNECT_GRACE_MS for that connection to end, and then
   * until it is marked waiting for its client, before the handshake claims it (a claim of
   * a session still connected is 410 session_expired).
   */
  async #previousConnectionGone(cdpSessionId: string): Promise<void> {
    const previous = this.#connections.get(cdpSessionId);
    if (previous !== undefined) {
      const grace = new AbortController();
      await Promise.race([previous.detached, delay(RECONNECT_GRACE_MS, undefined, { signal: grace.signal }).catch(() => undefined)]);
      grace.abort();
    }
    await this.#pausing.get(cdpSessionId);
  }

  #open(socket: WebSocket, row: CdpSessionRow, channel: CdpChannel, relayed: boolean): void {
    // Never rejects: a recording that cannot start is logged and marked failed by the recorder.
    const recording = this.services.recorder.start({ kind: 'cdp_session', id: row.id, orgId: row.orgId }, row.deviceId, this.#clientPages);
    let markDetached!: () => void;
    const detached = new Promise<void>((resolve) => {
      markDetached = resolve;
    });
    const connection: Connection = { row, socket, channel, stopWatchingKey: () => undefined, recording, ended: false, detached, markDetached, workers: new Set() };
    this.#connections.set(row.id, connection);
    connection.stopWatchingKey = this.services.keyRevocations.watch(row.keyId, () => this.#end(connection, 'key_revoked'));
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      channel.receive(data.toString());
    });
    socket.on('close', (code) => this.#pause(connection, relayed && asksToReconnect(code) ? 'service_restart' : 'client_closed'));
    socket.on('error', () => this.#pause(connection, 'client_closed'));
  }

  #deliver(cdpSessionId: string, message: string): void {
    const connection = this.#connections.get(cdpSessionId);
    if (connection === undefined || connection.ended) return;
    if (connection.socket.bufferedAmount > MAX_BUFFERED_BYTES) return this.#pause(connection, 'client_closed');
    connection.socket.send(message);
  }

  /** The session ends (DELETE, expiry, revocation, device gone): recorded, slot freed. */
  #end(connection: Connection, reason: CdpCloseReason): void {
    if (!this.#detach(connection)) return;
    closeSocket(connection.socket, CLOSE_REASONS[reason]);
    this.#track(releaseCdpConnection(this.services.db, connection.row.id, reason));
  }

  /**
   * The connection ends but its session does not: the client left (1000 `closed`), or is
   * asked to come back (1012). The session keeps the slot and waits for its client; the
   * close frame goes once it does, so a client that comes back at once is not refused as
   * still connected.
   */
  #pause(connection: Connection, reason: CdpDisconnectReason): void {
    if (!this.#detach(connection)) return;
    const { id } = connection.row;
    const marked = awaitCdpReconnect(this.services.db, connection.row, this.services.hostId, reason);
    const settled: Promise<void> = marked
      .catch(() => undefined)
      .finally(() => {
        if (this.#pausing.get(id) === settled) this.#pausing.delete(id);
        closeSocket(connection.socket, reason === 'client_closed' ? CLOSE_REASONS.client_closed : RECONNECT_CLOSES[reason]);
      });
    this.#pausing.set(id, settled);
    this.#track(marked);
  }

  /**
   * What every close of a connection here does first, once: the browser session and the
   * key watch stop, and so does the recording, tracked so close() waits until the video
   * is stored (a reconnection records anew); a crash leaves the row `recording`, which
   * Recorder.recover() finishes at this host's next start. False when it was done already.
   */
  #detach(connection: Connection): boolean {
    if (connection.ended) return false;
    connection.ended = true;
    this.#connections.delete(connection.row.id);
    connection.markDetached();
    connection.stopWatchingKey();
    for (const worker of connection.workers) {
      closeSocket(worker.socket, CLOSE_REASONS.client_closed);
      void worker.channel.close();
    }
    connection.workers.clear();
    void connection.channel.close();
    this.#track(connection.recording.then((active) => active.stop()));
    return true;
  }

  #track(release: Promise<void>): void {
    const tracked: Promise<void> = release
      .catch((error: unknown) => this.services.log.error({ err: error }, 'could not record the end of a CDP connection'))
      .finally(() => this.#releases.delete(tracked));
    this.#releases.add(tracked);
  }

  protected async checkConnections(): Promise<void> {
    const ids = [...this.#connections.keys()];
    if (ids.length === 0) return;
    try {
      const ended = await endedCdpConnections(this.services.db, ids);
      for (const [id, reason] of ended) {
        const connection = this.#connections.get(id);
        if (connection !== undefined) this.#end(connection, reason);
      }
    } catch (error) {
      if (!this.services.databaseAvailability.absorb(error)) this.services.log.warn({ err: error }, 'could not check CDP connections');
    }
  }

  async #renew(): Promise<void> {
    try {
      await heartbeatCdpConnections(this.services.db, [...this.#connections.keys()]);
      const closed = await closeAbandonedCdpConnections(this.services.db, null);
      if (closed > 0) this.services.log.warn({ closed }, 'closed CDP connections whose instance stopped renewing them');
      const unresumable = await endUnresumableCdpConnections(this.services.db);
      if (unresumable > 0) this.services.log.info({ closed: unresumable }, 'closed CDP connections that waited for their client in vain');
    } catch (error) {
      if (!this.services.databaseAvailability.absorb(error)) this.services.log.warn({ err: error }, 'could not renew CDP connections');
    }
  }
}
