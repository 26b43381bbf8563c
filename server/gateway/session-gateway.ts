import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import { InvalidLiveInputError } from '../browser';
import { toPublicId } from '../domain/ids';
import { ConcurrencySlots } from '../domain/rate-limit/concurrency-slots';
import { SESSION_CHANNEL } from '../domain/channels/session-channel';
import { currentSession } from '../domain/sessions/live-view-session';
import { SessionControl } from '../domain/sessions/session-control';
import { isSessionLive, type SessionRow } from '../domain/sessions/session-resource';
import { LIVE_VIEW_SUBPROTOCOL } from '../domain/sessions/session-token';
import { iso } from '../domain/time';
import { ApiError } from '../core/errors';
import type { CallerOf } from '../http/resolve-caller';
import type { Services } from '../services/services';
import { DeviceSocketGateway, RECONNECT_CLOSES, type Admission, type ReconnectReason } from './device-socket-gateway';
import { DeviceViews, type SharedView } from './device-views';
import { SessionRecordings } from '../artifacts/session-recordings';
import { ClientMessageSchema, CLOSE, MAX_BUFFERED_FRAME_BYTES, type InputRefusal } from './gateway-messages';

const MAX_MESSAGE_BYTES = 64 * 1024;
// Expiry and a browser that went away (device slept, deleted, lost) are noticed by this
// sweep; revocation and holds arrive at once through NOTIFY.
const SWEEP_MS = 1_000;

interface Connection {
  socket: WebSocket;
  /** The session row as last read; refreshed on every change notification. */
  session: SessionRow;
  view: SharedView;
  stopFrames: () => void;
  /** Gives back the socket's place among its session's sockets. */
  releaseSlot: () => void;
  /** Inputs run one after another, in the order they arrived. */
  inputs: Promise<void>;
  /** Inputs received and not yet done; past the configured bound the socket is closed. */
  queuedInputs: number;
}

/**
 * The live-view WebSocket gateway at `/v1/sessions/{id}/ws` (its caller: the session token
 * offered as a subprotocol; the upgrade, relay and close are DeviceSocketGateway's):
 * relays the device page's screencast to every socket of a live session, and input as
 * domain/sessions/session-control.ts allows it, re-checking the session on every relayed
 * message.
 */
export class SessionGateway extends DeviceSocketGateway<'session_token'> {
  readonly #views: DeviceViews;
  readonly #recordings: SessionRecordings;
  readonly #connections = new Set<Connection>();
  readonly #control: SessionControl;
  /** Sockets per session, counted where the device's browser runs (relayed ones included). */
  readonly #socketSlots: ConcurrencySlots;
  #unsubscribe: () => void = () => undefined;

  constructor(services: Services, views: DeviceViews) {
    super(services, 'session', { maxPayload: MAX_MESSAGE_BYTES, handleProtocols: (offered) => (offered.has(LIVE_VIEW_SUBPROTOCOL) ? LIVE_VIEW_SUBPROTOCOL : false) }, SWEEP_MS);
    this.#views = views;
    this.#recordings = new SessionRecordings(services.recorder);
    this.#control = new SessionControl(services.db);
    this.#socketSlots = new ConcurrencySlots(services.config.limits.socketsPerSession);
  }

  override start(): void {
    this.#unsubscribe = this.services.notifications.subscribe(SESSION_CHANNEL, {
      onNotify: (sessionId) => void this.#refresh(sessionId),
      // Changes notified while the connection was down were lost: every watched session is read again.
      onReconnect: () => new Set([...this.#connections].map((connection) => connection.session.id)).forEach((sessionId) => void this.#refresh(sessionId)),
    });
    super.start();
  }

  /** Its clients reconnect (1012): their sessions stay valid, so the same token opens the view again on the next instance. */
  override async close(): Promise<void> {
    this.#unsubscribe();
    await super.close();
  }

  protected get servedCount(): number {
    return this.#connections.size;
  }

  protected async admit(_req: IncomingMessage, { session }: CallerOf['session_token']): Promise<Admission> {
    // Claimed here, where the device's browser runs, so every socket of the session counts.
    const releaseSlot = this.#socketSlots.claim(session.id);
    if (releaseSlot === null) throw new ApiError('too_many_sockets');
    // No browser here: the device went away meanwhile, or its host is not reachable.
    const view = await this.#views.acquire(session.deviceId).catch(() => {
      releaseSlot();
      return Promise.reject(new ApiError('device_not_ready'));
    });
    return {
      open: (ws) => this.#open(ws, session, view, releaseSlot),
      refused: () => {
        releaseSlot();
        this.#views.release(session.deviceId);
      },
    };
  }

  protected reconnect(deviceId: string | null, reason: ReconnectReason): void {
    for (const connection of this.#connections) if (deviceId === null || connection.session.deviceId === deviceId) this.#end(connection, RECONNECT_CLOSES[reason]);
  }

  #open(socket: WebSocket, session: SessionRow, view: SharedView, releaseSlot: () => void): void {
    const connection: Connection = { socket, session, view, stopFrames: () => undefined, releaseSlot, inputs: Promise.resolve(), queuedInputs: 0 };
    this.#connections.add(connection);
    this.#recordings.socketOpened(session);
    send(socket, {
      type: 'ready',
      session_id: toPublicId('session', session.id),
      device_id: toPublicId('device', session.deviceId),
      mode: session.mode,
      expires_at: iso(session.expiresAt),
    });
    connection.stopFrames = view.onFrame((message) => this.#relayFrame(connection, message));
    socket.on('message', (data, isBinary) => {
      // A client sending faster than the page takes input would grow this queue without end.
      if (connection.queuedInputs >= this.services.config.limits.sessionInputQueue) return this.#end(connection, CLOSE.inputQueueFull);
      connection.queuedInputs += 1;
      connection.inputs = connection.inputs
        .then(() => this.#relayInput(connection, data, isBinary))
        .catch((error: unknown) => {
          // Never left rejected: the next input must still run.
          this.services.log.error({ err: error, sessionId: session.id }, 'relaying session input failed');
          this.#end(connection, CLOSE.deviceNotReady);
        })
        .finally(() => {
          connection.queuedInputs -= 1;
        });
    });
    socket.on('close', () => this.#forget(connection));
    socket.on('error', () => this.#forget(connection));
  }

  #relayFrame(connection: Connection, message: Buffer): void {
    if (!this.#stillLive(connection)) return;
    if (connection.socket.bufferedAmount > MAX_BUFFERED_FRAME_BYTES) return;
    // The device's frame message, encoded once for all its sockets, sent as a text message.
    connection.socket.send(message, { binary: false });
  }

  async #relayInput(connection: Connection, data: RawData, isBinary: boolean): Promise<void> {
    if (!this.#stillLive(connection)) return;
    const parsed = isBinary ? null : ClientMessageSchema.safeParse(parseJson(data.toString()));
    if (parsed === null || !parsed.success) return refuse(connection, 'invalid_message', 'Messages are JSON {"type": "input", "input": {...}}.');
    const refusal = (await this.#control.inputRefusal(connection.session)) === null ? null : await this.#inputRefusalNow(connection);
    if (refusal !== null) return refuse(connection, 'input_not_allowed', refusal);
    try {
      await connection.view.input(parsed.data.input);
    } catch (error) {
      if (error instanceof InvalidLiveInputError) return refuse(connection, 'invalid_input', 'The page cannot take this input.');
      this.#end(connection, CLOSE.deviceNotReady);
    }
  }

  /**
   * Why the session may not send input, from its row read again: the row the connection
   * holds may predate a takeover its client was just answered (the change's notice is
   * still on its way), and the input that follows the answer must not be refused.
   */
  async #inputRefusalNow(connection: Connection): Promise<string | null> {
    if (connection.session.mode === 'control') {
      const row = await currentSession(this.services.db, connection.session.id);
      if (row !== null) connection.session = row;
    }
    return this.#control.inputRefusal(connection.session);
  }

  /** The per-message liveness check; a dead session or browser closes the socket. */
  #stillLive(connection: Connection): boolean {
    if (connection.socket.readyState !== connection.socket.OPEN) return false;
    if (!isSessionLive(connection.session)) {
      this.#end(connection, CLOSE.sessionExpired);
      return false;
    }
    if (this.services.browserPool.get(connection.session.deviceId) === undefined) {
      this.#end(connection, CLOSE.deviceNotReady);
      return false;
    }
    return true;
  }

  protected checkConnections(): void {
    for (const connection of this.#connections) this.#stillLive(connection);
  }

  async #refresh(sessionId: string): Promise<void> {
    const affected = [...this.#connections].filter((connection) => connection.session.id === sessionId);
    if (affected.length === 0) return;
    try {
      const row = await currentSession(this.services.db, sessionId);
      for (const connection of affected) {
        if (row !== null) connection.session = row;
        this.#stillLive(connection);
      }
    } catch (error) {
      if (!this.services.databaseAvailability.absorb(error)) this.services.log.warn({ err: error, sessionId }, 'could not re-read a session after a change');
    }
  }

  #end(connection: Connection, reason: { code: number; reason: string }): void {
    if (connection.socket.readyState === connection.socket.OPEN) connection.socket.close(reason.code, reason.reason);
    this.#forget(connection);
  }

  #forget(connection: Connection): void {
    if (!this.#connections.delete(connection)) return;
    connection.stopFrames();
    connection.releaseSlot();
    this.#recordings.socketClosed(connection.session.id);
    this.#views.release(connection.session.deviceId);
  }
}

function refuse(connection: Connection, code: InputRefusal, message: string): void {
  send(connection.socket, { type: 'error', code, message });
}

function send(socket: WebSocket, message: Record<string, unknown>): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
