import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { CdpConnectError, openCdpTransport } from './cdp-transport.js';

// A server that answers each WebSocket upgrade the way its path says: /full as
// browserless does when its pool is full, /queued as it does with a queued connection
// (holds the upgrade), /broken with a server error, /open by opening an echo socket.

let server: Server;
let base: string;
const held: Duplex[] = [];

beforeAll(async () => {
  const sockets = new WebSocketServer({ noServer: true });
  server = createServer();
  server.on('upgrade', (request, socket, head) => {
    switch (request.url) {
      case '/full':
        socket.end('HTTP/1.1 429 Too Many Requests\r\nContent-Length: 17\r\n\r\nToo many requests');
        return;
      case '/queued':
        held.push(socket);
        return;
      case '/broken':
        socket.end('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n');
        return;
      default:
        sockets.handleUpgrade(request, socket, head, (ws) => ws.on('message', (data) => ws.send(data.toString())));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

async function refusal(url: string, timeoutMs = 2_000): Promise<CdpConnectError> {
  const error = await openCdpTransport(url, timeoutMs).then(
    () => null,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(CdpConnectError);
  return error as CdpConnectError;
}

describe('opening a CDP WebSocket', () => {
  it('says busy when the endpoint refuses the upgrade with 429', async () => {
    expect((await refusal(`${base}/full`)).reason).toBe('busy');
  });

  it('gives up on a held handshake at the timeout', async () => {
    const started = Date.now();
    expect((await refusal(`${base}/queued`, 300)).reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('says failed for other refusals and for an endpoint that is not there', async () => {
    expect((await refusal(`${base}/broken`)).reason).toBe('failed');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect((await refusal(`ws://127.0.0.1:${port}/`)).reason).toBe('failed');
  });

  it('carries messages both ways once open, and tells when the socket has closed', async () => {
    const transport = await openCdpTransport(`${base}/open`, 2_000);
    const received = new Promise<string>((resolve) => (transport.onmessage = resolve));
    let closeHeard = false;
    transport.onclose = () => (closeHeard = true);
    transport.send('{"id":1}');
    expect(await received).toBe('{"id":1}');
    transport.close();
    await transport.closed;
    expect(closeHeard).toBe(true);
  });
});
