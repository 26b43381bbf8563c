import type { WebSocket } from 'ws';
import { pipeSockets, type Relay } from './session-relay';

/**
 * The sockets a gateway relays to the instance that runs their device's browser (live-view
 * and CDP alike), each piped to its upstream until either side closes.
 */
export class RelayedSockets {
  readonly #pairs = new Set<{ client: WebSocket; upstream: WebSocket }>();

  get size(): number {
    return this.#pairs.size;
  }

  add(client: WebSocket, relay: Relay): void {
    const pair = { client, upstream: relay.upstream };
    this.#pairs.add(pair);
    pipeSockets(client, relay, () => this.#pairs.delete(pair));
  }

  /**
   * Closes both sides of every relay with `close`, the device's instance first: it hears
   * it at once, before the client (which may come back at once), rather than after the
   * client answered the close.
   */
  closeAll(close: { code: number; reason: string }): void {
    for (const { client, upstream } of this.#pairs) {
      upstream.close(close.code, close.reason);
      client.close(close.code, close.reason);
    }
  }
}
