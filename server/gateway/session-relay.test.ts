import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { encodeFrameMessage } from './gateway-messages';
import { openRelay, pipeSockets, RelayRefused } from './session-relay';

// The relay's limits: the owner's refusal of a handshake is passed back as it was (status,
// body, Retry-After) and an answer that is no refusal (over 1 MiB) is never held; a slow
// client behind the relay skips frames instead of piling them up.

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

/** A stand-in for the owner instance, answering every WebSocket upgrade with `respond`. */
async function owner(respond: (socket: NodeJS.WritableStream) => void): Promise<string> {
  server = createServer();
  server.on('upgrade', (_req, socket) => respond(socket));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('openRelay', () => {
  it("passes the owner's refusal back with its status, body and Retry-After", async () => {
    const body = JSON.stringify({ error: { code: 'rate_limited', message: 'Too many.', request_id: 'req_x' } });
    const url = await owner((socket) =>
      socket.end(`HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 3\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
    );
    const refusal = await openRelay(url, '/v1/sessions/ses_x/ws', ['svc.operator.v1']).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RelayRefused);
    expect(refusal).toMatchObject({ status: 429, body, headers: { 'Retry-After': '3' } });
  });

  it('gives up on a refusal body past 1 MiB instead of reading it to its end', async () => {
    const url = await owner((socket) => {
      socket.write('HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n\r\n');
      // A body that never ends: only a relay that stops at the limit returns.
      const chunk = ' '.repeat(64 * 1024);
      let open = true;
      socket.on('close', () => (open = false));
      socket.on('error', () => (open = false));
      const writeMore = () => {
        if (open) socket.write(chunk, writeMore);
      };
      writeMore();
    });
    const failure = await openRelay(url, '/v1/sessions/ses_x/ws', ['svc.operator.v1']).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(RelayRefused);
  });
});

/** A socket as pipeSockets uses it: messages in by emit, out recorded, a settable backlog. */
class RecordingSocket extends EventEmitter {
  readyState: number = WebSocket.OPEN;
  bufferedAmount = 0;
  readonly sent: Buffer[] = [];
  send(data: Buffer): void {
    this.sent.push(data);
  }
  close(): void {
    this.readyState = WebSocket.CLOSED;
  }
  terminate(): void {
    this.close();
  }
}

describe('pipeSockets', () => {
  it('skips frames for a client with over 2 MiB unsent, never the other messages, and sends frames again once it drains', () => {
    const client = new RecordingSocket();
    const upstream = new RecordingSocket();
    pipeSockets(client as unknown as WebSocket, { upstream: upstream as unknown as WebSocket, takeEarlyMessages: () => [] }, () => undefined);
    const frame = encodeFrameMessage({ data: '/9j/AAAA', width: 800, height: 600, swappedAt: 0 });
    const refusal = Buffer.from(JSON.stringify({ type: 'error', code: 'input_not_allowed', message: 'No.' }));

    client.bufferedAmount = 3 * 1024 * 1024;
    upstream.emit('message', frame, false);
    upstream.emit('message', refusal, false);
    expect(client.sent).toEqual([refusal]);

    client.bufferedAmount = 0;
    upstream.emit('message', frame, false);
    expect(client.sent).toEqual([refusal, frame]);
  });
});
