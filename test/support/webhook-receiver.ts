import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as a webhook receiver saw it: raw body bytes, never re-serialized. */
export interface ReceivedDelivery {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Resolves once `count` requests have arrived, or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on 127.0.0.1 (or `address`, e.g. the runner's on a network of
 * network-hosts.ts) and a kernel-picked port. `answer` decides each reply from the
 * request's index; it may also leave the response open.
 */
export async function startWebhookReceiver(
  answer: (res: http.ServerResponse, index: number, delivery: ReceivedDelivery) => void = (res) => res.writeHead(200).end(),
  address = '127.0.0.1',
): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const delivery = { method: req.method!, url: req.url!, headers: req.headers, rawBody: Buffer.concat(chunks), receivedAt: Date.now() };
      received.push(delivery);
      answer(res, received.length - 1, delivery);
      waiters.splice(0).forEach((notify) => notify());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}/hook`,
    received,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} deliveries, got ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received.slice(0, count);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
