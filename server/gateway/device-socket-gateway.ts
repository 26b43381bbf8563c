import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type ServerOptions, type WebSocket } from 'ws';
import { ApiError, asApiError } from '../core/errors';
import { deviceHostId } from '../domain/hosts/device-host';
import { hostInternalUrl } from '../domain/hosts/host-registry';
import { newPublicId } from '../domain/ids';
import { PeriodicTimer } from '../domain/periodic-timer';
import { answerOnSocket } from '../http/client-error';
import { resolveUpgradeCaller, type CallerOf, type UpgradeCallerRule } from '../http/resolve-caller';
import type { Services } from '../services/services';
import { SERVICE_RESTART_CLOSE } from '../../shared/reconnect-on-restart';
import { openRelay, pipeSockets, RelayRefused, RELAYED_HEADER, type Relay } from './session-relay';

/**
 * The close frames that ask a client to open its socket again with the same URL or token
 * (docs/api.md), by why the service closed it: this instance stops, or hands the device
 * over to another. The clients' side of it is shared/reconnect-on-restart.ts.
 */
export const RECONNECT_CLOSES = { service_restart: SERVICE_RESTART_CLOSE } as const;

export type ReconnectReason = keyof typeof RECONNECT_CLOSES;

/** A handshake the gateway took: what opens with the socket, and what is given back when it never opens. */
export interface Admission {
  open(socket: WebSocket): void;
  refused(): void;
}

/** What an upgrade entrance (assembly/entry-points.ts) hands its gateway: the caller it accepts, the id its path names, and that path. */
export interface UpgradeTarget<K extends UpgradeCallerRule['kind']> {
  caller: K;
  id: string;
  /** The path as the entrance declares it, with the id, and the query as it came: what a relay opens on the device's instance. */
  pathAndQuery: string;
}

/**
 * The base of the WebSocket gateways of a device's browser (the live view and CDP): the
 * upgrade, its caller resolved as its entrance declares, the socket relayed to the
 * instance that runs the device's browser when that is another one, a liveness check that
 * never overlaps itself, and the close (1012: sessions stay valid, clients reconnect).
 * Each gateway adds its own: what opens with a socket, what ends it, how it is handed over.
 */
export abstract class DeviceSocketGateway<K extends UpgradeCallerRule['kind']> {
  protected readonly services: Services;
  readonly #wss: WebSocketServer;
  /** Sockets relayed to the instance that runs their device's browser, each piped to its upstream until either side closes. */
  readonly #relays = new Set<{ client: WebSocket; upstream: WebSocket }>();
  readonly #liveness: PeriodicTimer;
  /** Set once close() began: handshakes are refused from then on. */
  protected closed = false;

  constructor(
    services: Services,
    /** How the gateway names itself in logs: `session`, `CDP`. */
    readonly name: string,
    options: Pick<ServerOptions, 'maxPayload' | 'handleProtocols' | 'perMessageDeflate'>,
    checkMs: number,
  ) {
    this.services = services;
    this.#wss = new WebSocketServer({ noServer: true, ...options });
    // The tick reports its own errors where it has any to report.
    this.#liveness = new PeriodicTimer(checkMs, () => this.checkConnections(), (error) => services.log.error({ err: error }, `${name} connection check failed`));
  }

  /** Sockets served here: the gateway's own. */
  protected abstract get servedCount(): number;
  /** Everything a socket of `caller` needs where the device's browser runs; throws the ApiError to refuse with, having given back what it took. */
  protected abstract admit(req: IncomingMessage, caller: CallerOf[K], id: string): Promise<Admission>;
  /** The liveness tick: ends the connections that must not stay open. */
  protected abstract checkConnections(): void | Promise<void>;
  /** Closes the connections (of one device, or all: null) with the reconnect frame, their sessions kept for their clients to reconnect. */
  protected abstract reconnect(deviceId: string | null, reason: ReconnectReason): void;

  start(): void {
    this.#liveness.start();
  }

  /** Sockets this instance serves, plus those it relays to another instance. */
  get socketCount(): number {
    return this.servedCount + this.#relays.size;
  }

  /** Takes an upgrade its entrance matched; the answer is the socket, or a refusal with a CONTRACT.md body. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, target: UpgradeTarget<K>): void {
    void this.#accept(req, socket, head, target);
  }

  /** Stops the gateway. Its clients are told to reconnect (1012), to the next instance. */
  async close(): Promise<void> {
    this.closed = true;
    await this.#liveness.stop();
    this.reconnect(null, 'service_restart');
    // The device's instance first: it hears it at once, before the client (which may come
    // back at once), rather than after the client answered the close.
    const { code, reason } = RECONNECT_CLOSES.service_restart;
    for (const { client, upstream } of this.#relays) {
      upstream.close(code, reason);
      client.close(code, reason);
    }
    this.#wss.close();
  }

  /** The device's browser leaves this instance (handed over): its sockets here reconnect, to wherever it runs next. */
  closeForDevice(deviceId: string, reason: ReconnectReason): void {
    this.reconnect(deviceId, reason);
  }

  async #accept(req: IncomingMessage, socket: Duplex, head: Buffer, target: UpgradeTarget<K>): Promise<void> {
    const requestId = newPublicId('request');
    let admission: Admission;
    try {
      if (this.closed) throw new ApiError('device_not_ready');
      const caller = await resolveUpgradeCaller(this.services, req, { kind: target.caller }, target.id);
      const { deviceId } = caller.session;
      if (this.services.browserPool.get(deviceId) === undefined && req.headers[RELAYED_HEADER] === undefined) {
        const relay = await this.#relayToDeviceHost(deviceId, target.pathAndQuery, req);
        if (relay !== null) return this.#upgrade(req, socket, head, { open: (client) => this.#relay(client, relay), refused: () => relay.upstream.close() });
      }
      admission = await this.admit(req, caller, target.id);
    } catch (error) {
      if (error instanceof RelayRefused) return answerOnSocket(socket, error.status, error.body, requestId, error.headers);
      const { apiError, unexpected } = asApiError(error);
      if (unexpected) this.services.log.error({ err: error, requestId }, `${this.name} handshake failed`);
      return answerOnSocket(socket, apiError.status, JSON.stringify(apiError.toBody(requestId)), requestId, apiError.headers);
    }
    this.#upgrade(req, socket, head, admission);
  }

  #relay(client: WebSocket, relay: Relay): void {
    const pair = { client, upstream: relay.upstream };
    this.#relays.add(pair);
    pipeSockets(client, relay, () => this.#relays.delete(pair));
  }

  /**
   * Completes the WebSocket upgrade. The `ws` server answers a malformed upgrade (bad key
   * or version) with 400 itself and never calls back; what was opened for it is then
   * given back when the socket closes.
   */
  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, admission: Admission): void {
    let opened = false;
    // A client gone while its handshake was checked never emits 'close' again.
    if (socket.destroyed) return admission.refused();
    socket.once('close', () => {
      if (!opened) admission.refused();
    });
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      opened = true;
      admission.open(ws);
    });
  }

  /**
   * The same socket opened on the instance that runs the device's browser, offering the
   * client's subprotocols unchanged and passing its handshake key on (that gateway checks
   * everything again, and CDP's admits a connection by the key); null when
   * that instance is this one or there is none. A host that refuses the handshake throws
   * RelayRefused, answered as that host did; a registered host that does not answer is
   * down, and so is the browser: null.
   */
  async #relayToDeviceHost(deviceId: string, pathAndQuery: string, req: IncomingMessage): Promise<Relay | null> {
    const hostId = await deviceHostId(this.services.db, deviceId);
    if (hostId === null || hostId === this.services.hostId) return null;
    const target = await hostInternalUrl(this.services.db, hostId);
    if (target === null) return null;
    const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((value) => value.trim()).filter((value) => value !== '');
    const key = req.headers['sec-websocket-key'];
    try {
      return await openRelay(target, pathAndQuery, protocols, typeof key === 'string' ? key : undefined);
    } catch (error) {
      if (error instanceof RelayRefused) throw error;
      this.services.log.warn({ err: error, hostId }, `could not relay a ${this.name} socket to its device host`);
      return null;
    }
  }
}
