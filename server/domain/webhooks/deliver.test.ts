import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverWebhook } from './deliver';
import type { Resolver } from '../../net/destination';

// Every receiver listens on loopback; nothing here sends traffic anywhere else.
interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  port: number;
  received: Received[];
}

const servers: (http.Server | https.Server)[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

async function startReceiver(
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  { host = '127.0.0.1', port = 0 }: { host?: string; port?: number } = {},
): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      answer(req, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { port: (server.address() as AddressInfo).port, received };
}

function answerWith(status: number, headers: Record<string, string> = {}) {
  return (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(status, headers);
    res.end('a body the sender must never read');
  };
}

// A throwaway self-signed certificate for 127.0.0.1, valid until 2126, used only to stand up
// an https receiver whose certificate the sender must refuse. It protects nothing.
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwlJ5TL5jCCLorNuq
vnkgDEHRI+cIzCMs3UG68AkvXQ2hRANCAARq6EejcakD1J8estZa3vfQD73JuXAO
OYU892WV5mHaZ78cmF960BWAuVLc6tJORh+l8Mkdmcn7O5l8cC8AiZDO
-----END PRIVATE KEY-----`;
const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBmjCCAUGgAwIBAgIUDI9R38hoOBXtXyA3cPjPP1nFChMwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMjA1NDQ0N1oYDzIxMjYxMDI5
MDU0NDQ3WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARq6EejcakD1J8estZa3vfQD73JuXAOOYU892WV5mHaZ78cmF960BWA
uVLc6tJORh+l8Mkdmcn7O5l8cC8AiZDOo28wbTAdBgNVHQ4EFgQUdu/wSPYXG3MT
J2SYAc4Ea5K3mjowHwYDVR0jBBgwFoAUdu/wSPYXG3MTJ2SYAc4Ea5K3mjowDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
zj0EAwIDRwAwRAIgDMgkHNsB2BgqB9NmXcF46797tFOezSVXSpfTn4iz9ogCIA2W
zFVFzZn4sAg4ytGtaaa2nanhL7NgrXVPypuWkUCo
-----END CERTIFICATE-----`;

const body = '{"id":"evt_1","created_at":"2026-11-22T10:00:00.000Z"}';
const headers = { 'x-service-signature': 't=1,v1=00', 'x-service-event': 'operator.task.succeeded.v1' };

describe('deliverWebhook', () => {
  it('POSTs the JSON body with the given headers and reports a 2xx as success', async () => {
    const receiver = await startReceiver(answerWith(204));
    const result = await deliverWebhook({ url: `http://127.0.0.1:${receiver.port}/hook`, body, headers, allowPrivate: true });
    expect(result).toEqual({ ok: true, status: 204 });
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request).toMatchObject({ method: 'POST', url: '/hook', body });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-service-signature']).toBe('t=1,v1=00');
    expect(request!.headers['x-service-event']).toBe('operator.task.succeeded.v1');
  });

  it('reports 200 as ok', async () => {
    const receiver = await startReceiver(answerWith(200));
    expect(await deliverWebhook({ url: `http://127.0.0.1:${receiver.port}/`, body, headers, allowPrivate: true })).toEqual({
      ok: true,
      status: 200,
    });
  });

  it('reports a non-2xx as http_<status>, without the response body', async () => {
    const receiver = await startReceiver(answerWith(500));
    expect(await deliverWebhook({ url: `http://127.0.0.1:${receiver.port}/`, body, headers, allowPrivate: true })).toEqual({
      ok: false,
      lastError: 'http_500',
    });
    const gone = await startReceiver(answerWith(410));
    expect(await deliverWebhook({ url: `http://127.0.0.1:${gone.port}/`, body, headers, allowPrivate: true })).toEqual({
      ok: false,
      lastError: 'http_410',
    });
  });

  it('treats a 3xx as a failure and never requests the Location target', async () => {
    const target = await startReceiver(answerWith(200));
    const redirecting = await startReceiver((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/elsewhere` });
      res.end();
    });
    const result = await deliverWebhook({ url: `http://127.0.0.1:${redirecting.port}/hook`, body, headers, allowPrivate: true });
    expect(result).toEqual({ ok: false, lastError: 'redirect' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(target.received).toHaveLength(0);
    expect(redirecting.received.map((r) => r.url)).toEqual(['/hook']);
  });

  it('times out on a receiver that never answers', async () => {
    const silent = await startReceiver(() => {});
    const started = Date.now();
    const result = await deliverWebhook({
      url: `http://127.0.0.1:${silent.port}/`,
      body,
      headers,
      allowPrivate: true,
      timeoutMs: 200,
    });
    expect(result).toEqual({ ok: false, lastError: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('times out when resolution itself hangs', async () => {
    const hanging: Resolver = () => new Promise(() => {});
    const result = await deliverWebhook({ url: 'http://slow.test/', body, headers, allowPrivate: true, timeoutMs: 100, resolve: hanging });
    expect(result).toEqual({ ok: false, lastError: 'timeout' });
  });

  it('reports a closed port as connection_refused', async () => {
    const receiver = await startReceiver(answerWith(200));
    const server = servers.pop()!;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const result = await deliverWebhook({ url: `http://127.0.0.1:${receiver.port}/`, body, headers, allowPrivate: true });
    expect(result).toEqual({ ok: false, lastError: 'connection_refused' });
  });

  it('reports a connection dropped without an answer as connection_refused', async () => {
    const rude = await startReceiver((req) => req.socket.destroy());
    const result = await deliverWebhook({ url: `http://127.0.0.1:${rude.port}/`, body, headers, allowPrivate: true });
    expect(result).toEqual({ ok: false, lastError: 'connection_refused' });
  });

  it('reports an unresolvable name as dns_failure', async () => {
    const result = await deliverWebhook({ url: 'http://nonexistent.invalid/hook', body, headers, allowPrivate: true });
    expect(result).toEqual({ ok: false, lastError: 'dns_failure' });
  });

  it('reports a failed TLS handshake as tls_error', async () => {
    // An https client talking to a plain-http receiver fails in the handshake.
    const plain = await startReceiver(answerWith(200));
    const result = await deliverWebhook({ url: `https://127.0.0.1:${plain.port}/`, body, headers, allowPrivate: true });
    expect(result).toEqual({ ok: false, lastError: 'tls_error' });
    expect(plain.received).toHaveLength(0);
  });

  it('reports an untrusted certificate as tls_error before any request is sent', async () => {
    let requests = 0;
    const server = https.createServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }, (_req, res) => {
      requests += 1;
      res.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const result = await deliverWebhook({ url: `https://127.0.0.1:${port}/`, body, headers, allowPrivate: true });
    expect(result).toEqual({ ok: false, lastError: 'tls_error' });
    expect(requests).toBe(0);
  });

  it('delivers to a bracketed IPv6 literal', async () => {
    const receiver = await startReceiver(answerWith(200), { host: '::1' });
    expect(await deliverWebhook({ url: `http://[::1]:${receiver.port}/`, body, headers, allowPrivate: true })).toEqual({
      ok: true,
      status: 200,
    });
    expect(await deliverWebhook({ url: `http://[::1]:${receiver.port}/`, body, headers, allowPrivate: false })).toEqual({
      ok: false,
      lastError: 'blocked_destination',
    });
    expect(receiver.received).toHaveLength(1);
  });

  it('refuses a private destination at delivery time when private destinations are not allowed', async () => {
    const receiver = await startReceiver(answerWith(200));
    expect(await deliverWebhook({ url: `http://127.0.0.1:${receiver.port}/`, body, headers, allowPrivate: false })).toEqual({
      ok: false,
      lastError: 'blocked_destination',
    });
    expect(await deliverWebhook({ url: `http://localhost:${receiver.port}/`, body, headers, allowPrivate: false })).toEqual({
      ok: false,
      lastError: 'blocked_destination',
    });
    // A name that looked public when the endpoint was created and now answers loopback.
    const rebound: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    expect(
      await deliverWebhook({ url: `http://rebound.test:${receiver.port}/`, body, headers, allowPrivate: false, resolve: rebound }),
    ).toEqual({ ok: false, lastError: 'blocked_destination' });
    expect(await deliverWebhook({ url: 'ftp://127.0.0.1/', body, headers, allowPrivate: true })).toEqual({
      ok: false,
      lastError: 'blocked_destination',
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received).toHaveLength(0);
  });

  it('connects to the address that was checked, never to a second DNS answer', async () => {
    const checked = await startReceiver(answerWith(200), { host: '127.0.0.1' });
    const other = await startReceiver(answerWith(200), { host: '127.0.0.2', port: checked.port });
    let lookups = 0;
    // Answers the checked address first, and a different one to anyone who asks again.
    const flipping: Resolver = async () => {
      lookups += 1;
      return [{ address: lookups === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    const result = await deliverWebhook({
      url: `http://pinned.test:${checked.port}/hook`,
      body,
      headers,
      allowPrivate: true,
      resolve: flipping,
    });
    expect(result).toEqual({ ok: true, status: 200 });
    expect(lookups).toBe(1);
    expect(checked.received).toHaveLength(1);
    expect(checked.received[0]!.headers.host).toBe(`pinned.test:${checked.port}`);
    expect(other.received).toHaveLength(0);
  });

  it('connects to the checked address even when it differs from what the system resolver says', async () => {
    // The system resolves localhost to 127.0.0.1; the checked answer 127.0.0.2 must win.
    const system = await startReceiver(answerWith(200), { host: '127.0.0.1' });
    const checked = await startReceiver(answerWith(200), { host: '127.0.0.2', port: system.port });
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    const result = await deliverWebhook({ url: `http://localhost:${system.port}/`, body, headers, allowPrivate: true, resolve });
    expect(result).toEqual({ ok: true, status: 200 });
    expect(checked.received).toHaveLength(1);
    expect(system.received).toHaveLength(0);
  });
});
