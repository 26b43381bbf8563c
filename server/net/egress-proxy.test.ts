import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy, type EgressPolicyOptions } from './egress-policy';
import { randomBytes } from 'node:crypto';
import { EgressCredentials } from './egress-credentials';
import { EGRESS_CREDENTIAL_CHECK_URL, EGRESS_REFUSAL_HEADER, EgressProxy, type EgressProxyOptions } from './egress-proxy';

// The proxy on real sockets: a loopback origin stands for a private service, and the
// policy decides whether the proxy reaches it.
let origin: Server;
let originPort: number;
let hits = 0;
let proxy: EgressProxy | null = null;

beforeAll(async () => {
  origin = createServer((req, res) => {
    hits += 1;
    res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Seen-Host': req.headers.host ?? '' }).end(`hello ${req.url}`);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', () => resolve()));
  originPort = (origin.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => origin.close(() => resolve()));
});
afterEach(async () => {
  await proxy?.close();
  proxy = null;
  hits = 0;
});

async function startProxy(options: Partial<EgressPolicyOptions> = {}, proxyOptions: EgressProxyOptions = {}): Promise<EgressProxy> {
  proxy = await EgressProxy.start(new EgressPolicy({ allowPrivate: false, ownAddresses: () => [], ...options }), proxyOptions);
  return proxy;
}

function proxyAddress(p: EgressProxy): { host: string; port: number } {
  const url = new URL(p.url);
  return { host: url.hostname, port: Number(url.port) };
}

/** A plain-HTTP request in absolute form, as a browser sends it to a proxy. */
function proxiedGet(p: EgressProxy, target: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ ...proxyAddress(p), path: target, headers: { Host: new URL(target).host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a CONNECT tunnel and, when it is granted, sends one GET through it. */
function tunnelGet(p: EgressProxy, authority: string, headers: Record<string, string> = {}): Promise<{ status: number; marker?: string; body?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ ...proxyAddress(p), method: 'CONNECT', path: authority, headers });
    req.on('connect', (res, socket) => {
      const marker = res.headers[EGRESS_REFUSAL_HEADER.toLowerCase()] as string | undefined;
      if (res.statusCode !== 200) {
        socket.destroy();
        return resolve({ status: res.statusCode ?? 0, marker });
      }
      let body = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (body += chunk));
      socket.on('end', () => resolve({ status: 200, body }));
      socket.write(`GET /tunnelled HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('EgressProxy', () => {
  it('refuses plain HTTP to loopback with 403, never reaching the origin, and remembers the refusal', async () => {
    const p = await startProxy();
    const before = Date.now();
    const answer = await proxiedGet(p, `http://127.0.0.1:${originPort}/secret`);
    expect(answer.status).toBe(403);
    expect(answer.headers[EGRESS_REFUSAL_HEADER.toLowerCase()]).toBe('destination_blocked');
    expect(hits).toBe(0);
    expect(await p.refusedSince(`http://127.0.0.1:${originPort}/other-path`, before)).toBe(true);
    expect(await p.refusedSince(`http://127.0.0.1:${originPort}/`, Date.now() + 1)).toBe(false);
    expect(await p.refusedSince(`http://127.0.0.1:${originPort + 1}/`, before)).toBe(false);
  });

  it('refuses CONNECT tunnels to loopback, metadata and names that resolve privately', async () => {
    const p = await startProxy({ resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(await tunnelGet(p, `127.0.0.1:${originPort}`)).toEqual({ status: 403, marker: 'destination_blocked' });
    expect(await tunnelGet(p, '169.254.169.254:80')).toEqual({ status: 403, marker: 'destination_blocked' });
    expect(await tunnelGet(p, '[::ffff:127.0.0.1]:80')).toEqual({ status: 403, marker: 'destination_blocked' });
    expect(await tunnelGet(p, `innocent.example:${originPort}`)).toEqual({ status: 403, marker: 'destination_blocked' });
    expect(hits).toBe(0);
  });

  it('refuses an address of its own machine even when it is public', async () => {
    const p = await startProxy({ ownAddresses: () => ['203.0.113.9'], testAllowed: [] });
    expect((await tunnelGet(p, '203.0.113.9:443')).status).toBe(403);
  });

  it('forwards plain HTTP and tunnels to an address a rule opens, keeping the Host header', async () => {
    const p = await startProxy({ testAllowed: [`127.0.0.1:${originPort}`] });
    const plain = await proxiedGet(p, `http://127.0.0.1:${originPort}/page?q=1`);
    expect(plain).toMatchObject({ status: 200, body: 'hello /page?q=1' });
    expect(plain.headers['x-seen-host']).toBe(`127.0.0.1:${originPort}`);
    const tunnelled = await tunnelGet(p, `127.0.0.1:${originPort}`);
    expect(tunnelled.status).toBe(200);
    expect(tunnelled.body).toContain('hello /tunnelled');
    expect(hits).toBe(2);
    // The rule names one port: the next port on the same address stays closed.
    expect((await tunnelGet(p, `127.0.0.1:${originPort + 1}`)).status).toBe(403);
  });

  it('connects to the address it checked, resolving each name once (no rebinding)', async () => {
    const answers = [[{ address: '127.0.0.1', family: 4 as const }], [{ address: '10.0.0.1', family: 4 as const }]];
    let lookups = 0;
    const p = await startProxy({
      testAllowed: [`127.0.0.1:${originPort}`],
      resolve: async () => answers[Math.min(lookups++, 1)]!,
    });
    const answer = await proxiedGet(p, `http://rebinding.example:${originPort}/x`);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-seen-host']).toBe(`rebinding.example:${originPort}`);
    expect(lookups).toBe(1);
  });

  it('answers 502 when an allowed destination does not accept the connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const p = await startProxy({ testAllowed: [`127.0.0.1:${port}`] });
    expect((await tunnelGet(p, `127.0.0.1:${port}`)).status).toBe(502);
    expect((await proxiedGet(p, `http://127.0.0.1:${port}/`)).status).toBe(502);
  });

  it('is no origin server: a request in origin form gets 400', async () => {
    const p = await startProxy();
    const answer = await new Promise<number>((resolve, reject) => {
      const req = request({ ...proxyAddress(p), path: '/' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer).toBe(400);
  });
});

describe('EgressProxy on a network, asking each device its credential', () => {
  const deviceId = '3f2b8c1e-9d4a-4e6b-8f0c-1a2b3c4d5e6f';
  const basic = (user: string, password: string) => ({ 'Proxy-Authorization': `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

  it('admits only a device with its own credential, on requests and tunnels alike, under a key any instance may hold', async () => {
    const key = randomBytes(32);
    const credentials = new EgressCredentials(key);
    const p = await startProxy({ allowPrivate: true }, { credentials });
    const target = `http://127.0.0.1:${originPort}/page`;
    const own = credentials.for(deviceId);
    const other = credentials.for('00000000-0000-4000-8000-000000000000');
    const otherKey = new EgressCredentials(randomBytes(32)).for(deviceId);
    for (const headers of [{}, basic(deviceId, 'guess'), basic(deviceId, other.password), basic(deviceId, otherKey.password), basic('not-a-device', own.password), { 'Proxy-Authorization': 'Bearer x' }]) {
      const refused = await proxiedGet(p, target, headers);
      expect(refused.status).toBe(407);
      expect(refused.headers['proxy-authenticate']).toBe('Basic realm="device egress"');
      expect((await tunnelGet(p, `127.0.0.1:${originPort}`, headers)).status).toBe(407);
    }
    expect(hits).toBe(0);
    // Another instance's proxy, under the same shared key, admits the same credential.
    const admitted = basic(...(Object.values(new EgressCredentials(Buffer.from(key)).for(deviceId)) as [string, string]));
    expect(await proxiedGet(p, target, admitted)).toMatchObject({ status: 200, body: 'hello /page' });
    expect(await tunnelGet(p, `127.0.0.1:${originPort}`, admitted)).toMatchObject({ status: 200 });
    expect((await proxiedGet(p, EGRESS_CREDENTIAL_CHECK_URL, admitted)).status).toBe(204);
    expect((await proxiedGet(p, EGRESS_CREDENTIAL_CHECK_URL)).status).toBe(407);
  });

  it('tells browsers the name they dial, and holds a shared port or fails', async () => {
    const first = await EgressProxy.start(new EgressPolicy({ allowPrivate: false, ownAddresses: () => [] }), { dialHost: 'egress.internal' });
    try {
      expect(first.url).toBe(`http://egress.internal:${first.port}`);
      // Behind a shared name another instance's proxy may have refused a connection this
      // one never saw: the policy, the same everywhere, says it was refused.
      expect(await first.refusedSince('https://127.0.0.1:9/', Date.now())).toBe(true);
      const alone = await startProxy();
      expect(await alone.refusedSince('https://127.0.0.1:9/', Date.now())).toBe(false);
      await expect(EgressProxy.start(new EgressPolicy({ allowPrivate: false, ownAddresses: () => [] }), { preferredPort: first.port, portRequired: true })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });

  it('asks nothing on loopback, where only this machine reaches it', async () => {
    const p = await startProxy({ allowPrivate: true });
    expect(p.credentialsFor(deviceId)).toBeNull();
    expect((await proxiedGet(p, `http://127.0.0.1:${originPort}/open`)).status).toBe(200);
  });
});
