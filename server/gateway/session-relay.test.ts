import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openRelay, RelayRefused } from './session-relay';

// The relay's side of a refused handshake: the owner's answer is passed back as it was
// (status, body, Retry-After), and an answer that is no refusal (over 1 MiB) is never held.

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
    const refusal = await openRelay(url, 'ses_x', ['svc.operator.v1']).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RelayRefused);
    expect(refusal).toMatchObject({ status: 429, body, headers: { 'Retry-After': '3' } });
  });

  it('gives up on a refusal body past 1 MiB instead of reading it to its end', async () => {
    const url = await owner((socket) => {
      socket.write('HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n\r\n');
      // A body that never ends: only a relay that stops at the limit returns.
      const chunk = ' '.repeat(64 * 1024);
      const timer = setInterval(() => socket.write(chunk), 1);
      socket.on('close', () => clearInterval(timer));
      socket.on('error', () => clearInterval(timer));
    });
    const failure = await openRelay(url, 'ses_x', ['svc.operator.v1']).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(RelayRefused);
  });
});
