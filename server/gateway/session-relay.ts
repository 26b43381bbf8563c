import { WebSocket, type RawData } from 'ws';
import { readBody } from '../http/read-body';
import { isFrameMessage, MAX_BUFFERED_FRAME_BYTES } from './gateway-messages';

/** Marks a handshake one gateway relays to another, which must not relay it further. */
export const RELAYED_HEADER = 'x-svc-relayed';
/**
 * The client's own Sec-WebSocket-Key, passed on by the relaying instance (its socket to
 * the owner has a key of its own): the owner admits the Stagehand extension worker's
 * connection by it (cdp-gateway.ts).
 */
export const RELAYED_KEY_HEADER = 'x-svc-relayed-key';

export interface Relay {
  upstream: WebSocket;
  /** What the owner sent before the client's side was ready; stops collecting. */
  takeEarlyMessages(): Array<{ data: RawData; isBinary: boolean }>;
}

/** The owning instance refused the handshake: its answer goes back to the client as is. */
export class RelayRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    /** The owner's Retry-After, when it sent one (429s). */
    readonly headers: Record<string, string>,
  ) {
    super(`the device's instance answered ${status}`);
  }
}

/**
 * Opens the same socket (a live-view session's, a CDP session's: `pathAndQuery`) on the
 * instance whose process runs the device's browser, offering the client's subprotocols
 * (a session token among them) unchanged: that gateway authenticates and checks
 * everything again, as for a direct client.
 */
export function openRelay(internalUrl: string, pathAndQuery: string, protocols: string[], clientKey?: string): Promise<Relay> {
  return new Promise((resolve, reject) => {
    const upstream = new WebSocket(`${internalUrl.replace(/^http/, 'ws')}${pathAndQuery}`, protocols, {
      headers: { [RELAYED_HEADER]: '1', ...(clientKey === undefined ? {} : { [RELAYED_KEY_HEADER]: clientKey }) },
      perMessageDeflate: false,
    });
    upstream.once('open', () => {
      // The owner speaks first (`ready`, a frame) while the client's upgrade completes.
      const early: Array<{ data: RawData; isBinary: boolean }> = [];
      const keep = (data: RawData, isBinary: boolean) => early.push({ data, isBinary });
      upstream.on('message', keep);
      resolve({
        upstream,
        takeEarlyMessages: () => {
          upstream.off('message', keep);
          return early;
        },
      });
    });
    upstream.once('unexpected-response', (request, response) => {
      readBody(response)
        .then((body) => {
          // A refusal is a short error body; anything past 1 MiB is not one and is not held.
          if (body === null) {
            request.destroy();
            throw new Error('the device host answered the relay with an oversized body');
          }
          const retryAfter = response.headers['retry-after'];
          reject(new RelayRefused(response.statusCode ?? 502, body.toString('utf8'), retryAfter === undefined ? {} : { 'Retry-After': retryAfter }));
        })
        .catch(reject);
    });
    upstream.once('error', reject);
  });
}

/**
 * Close codes a peer may send, passed on as they came (1012 among them: the client must
 * hear that it may reconnect); the others (1005, 1006, ...) only describe what happened.
 */
function sendableCloseCode(code: number): number {
  return code === 1000 || code === 1001 || code === 1008 || code === 1011 || code === 1012 || (code >= 3000 && code <= 4999) ? code : 1011;
}

/** Relays messages both ways until either side closes, then closes the other the same way. */
export function pipeSockets(client: WebSocket, relay: Relay, onClosed: () => void): void {
  const { upstream } = relay;
  for (const { data, isBinary } of relay.takeEarlyMessages()) client.send(data, { binary: isBinary });
  client.on('message', (data, isBinary) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
  });
  upstream.on('message', (data, isBinary) => {
    if (client.readyState !== WebSocket.OPEN) return;
    // The owner skips frames for its slow sockets, but the relay's socket to it drains
    // fast; a slow client behind the relay would otherwise pile frames up here.
    if (client.bufferedAmount > MAX_BUFFERED_FRAME_BYTES && Buffer.isBuffer(data) && isFrameMessage(data)) return;
    client.send(data, { binary: isBinary });
  });
  let closed = false;
  const closeBoth = (code: number, reason: Buffer) => {
    if (closed) return;
    closed = true;
    for (const socket of [client, upstream]) {
      if (socket.readyState === WebSocket.OPEN) socket.close(sendableCloseCode(code), reason.toString());
    }
    onClosed();
  };
  client.on('close', closeBoth);
  upstream.on('close', closeBoth);
  client.on('error', () => client.terminate());
  upstream.on('error', () => upstream.terminate());
}
