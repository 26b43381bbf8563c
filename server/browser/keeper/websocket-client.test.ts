import { createServer, type Server } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { WebSocketOpenError } from './keeper-protocol';
import { openWebSocket } from './websocket-client';

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

async function listen(handler: Parameters<typeof createServer>[1] = () => undefined): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `ws://127.0.0.1:${(server!.address() as { port: number }).port}/devtools/browser/x?token=t`;
}

it('exchanges small, medium and large text messages with a real WebSocket server, and closes', async () => {
  const url = await listen();
  const wss = new WebSocketServer({ server: server! });
  wss.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo:${data.toString()}`)));
  const link = await openWebSocket(url, 2_000);
  const received: string[] = [];
  const sizes = [5, 300, 70_000, 3_000_000];
  const all = new Promise<void>((resolve) => {
    link.onmessage = (message) => {
      received.push(message);
      if (received.length === sizes.length) resolve();
    };
  });
  for (const size of sizes) link.send('é'.repeat(size));
  await all;
  expect(received.map((message) => message.length)).toEqual(sizes.map((size) => size + 5));
  expect(received[3]).toBe(`echo:${'é'.repeat(3_000_000)}`);
  const closed = new Promise<void>((resolve) => (link.onclose = resolve));
  link.close();
  await closed;
  wss.close();
});

it('tells a full endpoint (429) from a broken one, and a handshake held too long', async () => {
  let status = 429;
  const url = await listen((_request, response) => response.writeHead(status).end());
  await expect(openWebSocket(url, 2_000)).rejects.toMatchObject({ reason: 'busy' });
  status = 404;
  await expect(openWebSocket(url, 2_000)).rejects.toMatchObject({ reason: 'failed' });
  server!.closeAllConnections();
  await new Promise((resolve) => server!.close(resolve));
  const held = await listen();
  const unanswered: Array<{ destroy(): void }> = [];
  server!.on('upgrade', (_request, socket) => unanswered.push(socket)); // held, as a queueing browserless does
  const error = await openWebSocket(held, 300).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(WebSocketOpenError);
  expect((error as WebSocketOpenError).reason).toBe('timeout');
  for (const socket of unanswered) socket.destroy();
});
