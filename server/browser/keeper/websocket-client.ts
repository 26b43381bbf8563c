// A minimal WebSocket client (RFC 6455: text messages, fragments, ping, close) for the
// keeper's connection to a remote browser. Self-contained, because the keeper runs
// with no packages; and Node's own WebSocket hides the HTTP status of a refused upgrade,
// which tells a full browserless pool (429/503) from a broken endpoint.
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { WebSocketOpenError } from './keeper-protocol.ts';

const BUSY_STATUSES = new Set([429, 503]);
const CLOSE_GRACE_MS = 2_000;
const OPCODE_CONTINUATION = 0x0;
const OPCODE_TEXT = 0x1;
const OPCODE_BINARY = 0x2;
const OPCODE_CLOSE = 0x8;
const OPCODE_PING = 0x9;

/** Opens `url` (ws: or wss:), the handshake bounded by `timeoutMs`. */
export function openWebSocket(url: string, timeoutMs: number): Promise<WebSocketLink> {
  const target = new URL(url);
  const request = target.protocol === 'wss:' ? httpsRequest : httpRequest;
  target.protocol = target.protocol === 'wss:' ? 'https:' : 'http:';
  return new Promise((resolve, reject) => {
    const req = request(target, {
      agent: false,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new WebSocketOpenError('timeout', `the WebSocket handshake took longer than ${timeoutMs} ms`));
    }, timeoutMs);
    req.once('response', (response: IncomingMessage) => {
      clearTimeout(timer);
      response.resume();
      const status = response.statusCode ?? 0;
      reject(new WebSocketOpenError(BUSY_STATUSES.has(status) ? 'busy' : 'failed', `the endpoint answered the upgrade with HTTP ${status}`));
    });
    req.once('upgrade', (_response: IncomingMessage, socket: Socket, head: Buffer) => {
      clearTimeout(timer);
      resolve(new WebSocketLink(socket, head));
    });
    req.once('error', () => {
      clearTimeout(timer);
      reject(new WebSocketOpenError('failed', 'the WebSocket could not be opened'));
    });
    req.end();
  });
}

/** An open WebSocket: text messages in and out. */
export class WebSocketLink {
  onmessage: (message: string) => void = () => undefined;
  onclose: () => void = () => undefined;
  private readonly socket: Socket;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private fragments: Buffer[] = [];
  /** Bytes the frame being received needs in all, once its header was read: no concatenation before. */
  private awaiting = 0;
  private closed = false;

  constructor(socket: Socket, head: Buffer) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      this.closed = true;
      this.onclose();
    });
    if (head.length > 0) queueMicrotask(() => this.receive(head));
  }

  send(message: string): void {
    if (!this.closed) this.socket.write(encodeFrame(OPCODE_TEXT, Buffer.from(message, 'utf8')));
  }

  /** The closing handshake, then the socket ends within CLOSE_GRACE_MS whatever the other side does. */
  close(): void {
    if (this.closed) return;
    this.socket.write(encodeFrame(OPCODE_CLOSE, Buffer.from([0x03, 0xe8])));
    this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  private receive(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      const frame = this.nextFrame();
      if (frame === null) return;
      this.handle(frame.fin, frame.opcode, frame.payload);
    }
  }

  /** The next whole frame, or null until enough bytes arrived (concatenated only once they did). */
  private nextFrame(): { fin: boolean; opcode: number; payload: Buffer } | null {
    if (this.buffered < 2 || this.buffered < this.awaiting) return null;
    const header = this.chunks.length === 1 ? this.chunks[0]! : this.flatten();
    const masked = (header[1]! & 0x80) !== 0;
    let length = header[1]! & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (this.buffered < 4) return null;
      length = this.flatten().readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (this.buffered < 10) return null;
      length = Number(this.flatten().readBigUInt64BE(2));
      offset = 10;
    }
    const maskOffset = offset;
    if (masked) offset += 4;
    if (this.buffered < offset + length) {
      this.awaiting = offset + length;
      return null;
    }
    this.awaiting = 0;
    const all = this.flatten();
    const payload = Buffer.from(all.subarray(offset, offset + length));
    if (masked) for (let i = 0; i < payload.length; i += 1) payload[i] = payload[i]! ^ all[maskOffset + (i % 4)]!;
    const rest = all.subarray(offset + length);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return { fin: (all[0]! & 0x80) !== 0, opcode: all[0]! & 0x0f, payload };
  }

  private flatten(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!;
  }

  private handle(fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode === OPCODE_TEXT || opcode === OPCODE_BINARY || opcode === OPCODE_CONTINUATION) {
      this.fragments.push(payload);
      if (!fin) return;
      const message = Buffer.concat(this.fragments).toString('utf8');
      this.fragments = [];
      this.onmessage(message);
    } else if (opcode === OPCODE_PING) {
      if (!this.closed) this.socket.write(encodeFrame(0xa, payload));
    } else if (opcode === OPCODE_CLOSE) {
      this.close();
    }
  }
}

/** One final frame from a client: masked, as RFC 6455 requires. */
export function encodeFrame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const lengthBytes = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const header = Buffer.alloc(2 + lengthBytes + 4);
  header[0] = 0x80 | opcode;
  if (lengthBytes === 0) header[1] = 0x80 | length;
  else if (lengthBytes === 2) {
    header[1] = 0x80 | 126;
    header.writeUInt16BE(length, 2);
  } else {
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  const mask = randomBytes(4);
  mask.copy(header, 2 + lengthBytes);
  const masked = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) masked[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([header, masked]);
}
