import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionError, InvalidRequestError, OperatorClient, ServiceError } from '@browser-device-operator/sdk';
import { readSse } from '../src/sse';

// The SDK's transport rules against a scripted HTTP server on loopback: which answers are
// retried, with which key, and how server-sent events are read.

const servers: Array<{ close(): void }> = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

async function scripted(answers: Array<(req: IncomingMessage, res: ServerResponse) => void>) {
  const seen: Array<{ method: string; key: string | undefined }> = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method!, key: req.headers['idempotency-key'] as string | undefined });
    req.resume();
    (answers.shift() ?? ((_, r) => r.writeHead(500).end()))(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_: IncomingMessage, res: ServerResponse) =>
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
const error = (status: number, code: string, headers: Record<string, string> = {}) => json(status, { error: { code, message: 'No.', request_id: 'req_1' } }, headers);
const device = { id: 'dev_1', object: 'device', name: 'd', region: 'local', space_id: 's', status: 'active', created_at: '', current_task_id: null, last_active_at: '' };

describe('retries', () => {
  it('retries 503 after Retry-After with the same Idempotency-Key, and uses the caller’s key when given', async () => {
    const server = await scripted([error(503, 'capacity_exhausted', { 'Retry-After': '0' }), json(201, device), json(201, device)]);
    const client = new OperatorClient({ apiKey: 'k', baseUrl: server.url });
    expect(await client.devices.create({})).toEqual(device);
    expect(server.seen[0]!.key).toBeDefined();
    expect(server.seen[1]!.key).toBe(server.seen[0]!.key);
    await client.devices.create({}, { idempotencyKey: 'mine' });
    expect(server.seen[2]!.key).toBe('mine');
  });

  it('does not retry other errors, and stops after maxRetries', async () => {
    const server = await scripted([error(400, 'invalid_request'), ...Array(3).fill(error(503, 'capacity_exhausted', { 'Retry-After': '0' }))]);
    const client = new OperatorClient({ apiKey: 'k', baseUrl: server.url, retry: { maxRetries: 2 } });
    await expect(client.devices.get('dev_1')).rejects.toBeInstanceOf(InvalidRequestError);
    expect(server.seen).toHaveLength(1);
    await expect(client.devices.get('dev_1')).rejects.toBeInstanceOf(ServiceError);
    expect(server.seen).toHaveLength(4);
  });

  it('turns a refused connection into a ConnectionError after retrying reads', async () => {
    const server = await scripted([]);
    servers.splice(0).forEach((open) => open.close());
    const client = new OperatorClient({ apiKey: 'k', baseUrl: server.url, retry: { maxRetries: 1, initialDelayMs: 1 } });
    await expect(client.devices.get('dev_1')).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe('readSse', () => {
  it('reads events split across chunks, CRLF lines, multi-line data, ids, and skips comments', async () => {
    const chunks = [': keep-alive\n\nid: 1\nevent: st', 'ep\r\ndata: {"a":\r\ndata: 1}\r\n\r\n', 'event: done\ndata: x\n\n'];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
    const messages = [];
    for await (const message of readSse(body)) messages.push(message);
    expect(messages).toEqual([
      { event: 'step', data: '{"a":\n1}', id: '1' },
      { event: 'done', data: 'x', id: undefined },
    ]);
  });
});
