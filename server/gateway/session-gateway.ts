import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { InvalidLiveInputError } from '../browser';
import { answerLinkMayControl } from '../domain/answer-links/answer-link-access';
import { operatorMayControl } from '../domain/console/operator-principal';
import { newPublicId, toPublicId } from '../domain/ids';
import { keyRecordLoader, type LoadKeyRecord } from '../domain/keys/key-record';
import { ConcurrencySlots } from '../domain/rate-limit/concurrency-slots';
import { SESSION_CHANNEL } from '../domain/channels/session-channel';
import { PeriodicTimer } from '../domain/periodic-timer';
import { currentSession } from '../domain/sessions/live-view-session';
import { isSessionLive, type SessionRow } from '../domain/sessions/session-resource';
import { iso } from '../domain/time';
import { ApiError } from '../core/errors';
import type { Services } from '../services/services';
import { DeviceViews, type SharedView } from './device-views';
import { SessionRecordings } from './session-recordings';
import { ClientMessageSchema, CLOSE, MAX_BUFFERED_FRAME_BYTES, SUBPROTOCOL, type InputRefusal } from './gateway-messages';
import { authenticateHandshake, gatewaySessionId } from './handshake';
import { refuseHandshake, writeRefusal } from './handshake-refusal';
import { relayToDeviceHost } from './device-host-relay';
import { RelayedSockets } from './relayed-sockets';
import { RECONNECT_CLOSES, type ReconnectReason } from './reconnect-closes';
import { RelayRefused, RELAYED_HEADER, type Relay } from './session-relay';

const MAX_MESSAGE_BYTES = 64 * 1024;
// Expiry and a browser that went away (device slept, deleted, lost) are noticed by this
// sweep; revocation and holds arrive at once through NOTIFY.
const SWEEP_MS = 1_000;
// How long a key's revocation may go unnoticed by the input check (as for API requests).
const KEY_CHECK_TTL_MS = 1_000;

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
 * The live-view WebSocket gateway at `/v1/sessions/{id}/ws`: authenticates the handshake
 * by the session token offered as a subprotocol, relays the device page's screencast to
 * every socket of a live session, and relays input from control sessions that hold a
 * takeover, re-checking the session (and, for input, the minting key and the hold) on
 * every relayed message. A session whose device's browser runs on another instance is
 * relayed, socket to socket, to that instance's gateway, which does all of that itself.
 */
export class SessionGateway {
  readonly #services: Services;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false) });
  readonly #views: DeviceViews;
  readonly #recordings: SessionRecordings;
  readonly #connections = new Set<Connection>();
  /** Sockets relayed to the instance that runs their device's browser. */
  readonly #relays = new RelayedSockets();
  readonly #loadKey: LoadKeyRecord;
  readonly #keyChecks = new Map<string, { at: number; allowed: Promise<boolean> }>();
  /** Sockets per session, counted where the device's browser runs (relayed ones included). */
  readonly #socketSlots: ConcurrencySlots;
  readonly #sweep = new PeriodicTimer(SWEEP_MS, () => this.#checkAll(), (error) => this.#services.log.error({ err: error }, 'live-view sweep failed'));
  #unsubscribe: () => void = () => undefined;
  #closed = false;

  constructor(services: Services, views: DeviceViews) {
    this.#services = services;
    this.#views = views;
    this.#recordings = new SessionRecordings(services.recorder);
    this.#loadKey = keyRecordLoader(services.db);
    this.#socketSlots = new ConcurrencySlots(services.config.limits.socketsPerSession);
  }

  async start(): Promise<void> {
    this.#unsubscribe = this.#services.notifications.subscribe(SESSION_CHANNEL, {
      onNotify: (sessionId) => void this.#refresh(sessionId),
      // Changes notified while the connection was down were lost: every watched session is read again.
      onReconnect: () => new Set([...this.#connections].map((connection) => connection.session.id)).forEach((sessionId) => void this.#refresh(sessionId)),
    });
    this.#sweep.start();
  }

  /** Sockets this instance serves, plus those it relays to another instance. */
  get socketCount(): number {
    return this.#connections.size + this.#relays.size;
  }

  /** Takes the upgrade when the URL is the gateway's; false leaves it to others. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const publicId = gatewaySessionId(req.url);
    if (publicId === null) return false;
    void this.#accept(req, socket, head, publicId);
    return true;
  }

  /**
   * Stops the gateway. Its clients are told to reconnect (1012): their sessions stay
   * valid, so the same token opens the view again on the next instance.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    await this.#sweep.stop();
    for (const connection of this.#connections) this.#end(connection, RECONNECT_CLOSES.service_restart);
    this.#relays.closeAll(RECONNECT_CLOSES.service_restart);
    this.#wss.close();
  }

  /**
   * The device's browser leaves this instance (handed over to another): the sockets that
   * watch it here are told to reconnect, and reach it wherever it runs next.
   */
  closeForDevice(deviceId: string, reason: ReconnectReason): void {
    for (const connection of this.#connections) if (connection.session.deviceId === deviceId) this.#end(connection, RECONNECT_CLOSES[reason]);
  }

  async #accept(req: IncomingMessage, socket: Duplex, head: Buffer, publicId: string): Promise<void> {
    const requestId = newPublicId('request');
    let session: SessionRow;
    let view: SharedView;
    let releaseSlot: (() => void) | null = null;
    try {
      if (this.#closed) throw new ApiError('device_not_ready');
      session = await this.#services.authThrottle.check(req, () => authenticateHandshake(this.#services.db, req, publicId));
      if (this.#services.browserPool.get(session.deviceId) === undefined && req.headers[RELAYED_HEADER] === undefined) {
        const relay = await this.#openRelay(session, publicId, req);
        if (relay !== null) {
          this.#upgrade(req, socket, head, (client) => this.#relays.add(client, relay), () => relay.upstream.close());
          return;
        }
      }
      // Claimed here, where the device's browser runs, so every socket of the session counts.
      releaseSlot = this.#socketSlots.claim(session.id);
      if (releaseSlot === null) throw new ApiError('too_many_sockets');
      // No browser here: the device went away meanwhile, or its host is not reachable.
      view = await this.#views.acquire(session.deviceId).catch(() => Promise.reject(new ApiError('device_not_ready')));
    } catch (error) {
      releaseSlot?.();
      if (error instanceof RelayRefused) writeRefusal(socket, error.status, error.body, requestId, error.headers);
      else refuseHandshake(socket, requestId, error, this.#services, 'session handshake failed');
      return;
    }
    const slot = releaseSlot;
    this.#upgrade(
      req,
      socket,
      head,
      (ws) => this.#open(ws, session, view, slot),
      () => {
        slot();
        this.#views.release(session.deviceId);
      },
    );
  }

  /**
   * Completes the WebSocket upgrade. The `ws` server answers a malformed upgrade (bad key
   * or version) with 400 itself and never calls back; what was opened for it is then
   * given back when the socket closes.
   */
  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, onOpen: (ws: WebSocket) => void, onRefused: () => void): void {
    let opened = false;
    // A client gone while its handshake was checked never emits 'close' again.
    if (socket.destroyed) return onRefused();
    socket.once('close', () => {
      if (!opened) onRefused();
    });
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      opened = true;
      onOpen(ws);
    });
  }

  /**
   * The socket of the session on the instance that runs the device's browser, or null
   * when the device has no other registered host (it is nowhere, or here).
   */
  async #openRelay(session: SessionRow, publicId: string, req: IncomingMessage): Promise<Relay | null> {
    const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((value) => value.trim());
    return relayToDeviceHost(this.#services, session.deviceId, `/v1/sessions/${publicId}/ws`, protocols, 'a session');
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
      if (connection.queuedInputs >= this.#services.config.limits.sessionInputQueue) return this.#end(connection, CLOSE.inputQueueFull);
      connection.queuedInputs += 1;
      connection.inputs = connection.inputs
        .then(() => this.#relayInput(connection, data, isBinary))
        .catch((error: unknown) => {
          // Never left rejected: the next input must still run.
          this.#services.log.error({ err: error, sessionId: session.id }, 'relaying session input failed');
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
    const { session } = connection;
    // All three, on every message (spec): a control session, the minting key still
    // holding operator:sessions:control, and this session holding an unexpired takeover.
    if (session.mode !== 'control') return refuse(connection, 'input_not_allowed', 'A watch session cannot send input.');
    if (session.holdTaskId === null || session.holdExpiresAt === null || session.holdExpiresAt <= new Date()) {
      return refuse(connection, 'input_not_allowed', 'Input needs a takeover held by this session.');
    }
    if (!(await this.#keyMayControl(session.keyId))) return refuse(connection, 'input_not_allowed', 'The key that minted this session can no longer control it.');
    try {
      await connection.view.input(parsed.data.input);
    } catch (error) {
      if (error instanceof InvalidLiveInputError) return refuse(connection, 'invalid_input', 'The page cannot take this input.');
      this.#end(connection, CLOSE.deviceNotReady);
    }
  }

  /** The per-message liveness check; a dead session or browser closes the socket. */
  #stillLive(connection: Connection): boolean {
    if (connection.socket.readyState !== connection.socket.OPEN) return false;
    if (!isSessionLive(connection.session)) {
      this.#end(connection, CLOSE.sessionExpired);
      return false;
    }
    if (this.#services.browserPool.get(connection.session.deviceId) === undefined) {
      this.#end(connection, CLOSE.deviceNotReady);
      return false;
    }
    return true;
  }

  #checkAll(): void {
    for (const connection of this.#connections) this.#stillLive(connection);
  }

  async #refresh(sessionId: string): Promise<void> {
    const affected = [...this.#connections].filter((connection) => connection.session.id === sessionId);
    if (affected.length === 0) return;
    try {
      const row = await currentSession(this.#services.db, sessionId);
      for (const connection of affected) {
        if (row !== null) connection.session = row;
        this.#stillLive(connection);
      }
    } catch (error) {
      if (!this.#services.databaseAvailability.absorb(error)) this.#services.log.warn({ err: error, sessionId }, 'could not re-read a session after a change');
    }
  }

  async #keyMayControl(keyId: string): Promise<boolean> {
    const cached = this.#keyChecks.get(keyId);
    if (cached !== undefined && Date.now() - cached.at < KEY_CHECK_TTL_MS) return cached.allowed;
    const allowed = this.#minterMayControl(keyId).catch(() => false);
    this.#keyChecks.set(keyId, { at: Date.now(), allowed });
    return allowed;
  }

  /**
   * The minter of a session is an API key, or a person without one: an operator in the
   * console (`console:<operator id>`, who must still exist) or an escalation's answer link
   * (`answer_url:<escalation id>`, whose escalation must still be pending).
   */
  async #minterMayControl(minter: string): Promise<boolean> {
    const person = (await operatorMayControl(this.#services.db, minter)) ?? (await answerLinkMayControl(this.#services.db, minter));
    if (person !== null) return person;
    const record = await this.#loadKey(minter);
    return record !== null && record.revokedAt === null && record.scopes.includes('operator:sessions:control');
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
