import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceContextOptions, deviceEndpoint, httpUrl, isLocalEndpoint, isSharedBrowserEndpoint, readRemoteCapacity } from './browserless-endpoint.js';
import { DEVICE_DISABLED_FEATURES } from './chromium-features.js';

const egress = { url: 'http://127.0.0.1:4100', refusedSince: async () => false, credentialsFor: () => null };

describe('the URL a device connects to', () => {
  it('on browserless: no session timeout, and with a proxy the WebRTC switch in the launch JSON, the token kept', () => {
    const url = deviceEndpoint('ws://127.0.0.1:3000?token=secret', egress);
    expect(url.searchParams.get('token')).toBe('secret');
    expect(url.searchParams.get('timeout')).toBe('0');
    expect(JSON.parse(url.searchParams.get('launch')!)).toEqual({ args: [DEVICE_DISABLED_FEATURES, '--force-webrtc-ip-handling-policy=disable_non_proxied_udp'] });
    // The proxy goes on the device's context, never on the command line, where browserless
    // would add its own host to the bypass list.
    expect([...url.searchParams.keys()].filter((name) => name.startsWith('--'))).toEqual([]);
    expect(url.searchParams.get('launch')).not.toContain('proxy');
    expect(deviceContextOptions(egress)).toEqual({ proxyServer: 'http://127.0.0.1:4100', proxyBypassList: ['<-loopback>'] });
  });

  it("keeps the launch options the operator put in BROWSERLESS_URL, as JSON or base64", () => {
    const operatorLaunch = { stealth: true, args: ['--lang=fr'] };
    for (const encoded of [JSON.stringify(operatorLaunch), Buffer.from(JSON.stringify(operatorLaunch)).toString('base64')]) {
      const url = deviceEndpoint(`ws://127.0.0.1:3000/chromium?token=t&launch=${encodeURIComponent(encoded)}`, egress);
      expect(JSON.parse(url.searchParams.get('launch')!)).toEqual({
        stealth: true,
        args: ['--lang=fr', DEVICE_DISABLED_FEATURES, '--force-webrtc-ip-handling-policy=disable_non_proxied_udp'],
      });
      expect(url.pathname).toBe('/chromium');
    }
    expect(() => deviceEndpoint('ws://127.0.0.1:3000?launch=%5B1%5D', egress)).toThrow(/launch parameter/);
  });

  it('without a proxy (a browserless on another machine) adds only the autofill switch, and a raw DevTools endpoint is used as it is', () => {
    const remote = deviceEndpoint('wss://browserless.internal/?token=t', null);
    expect(JSON.parse(remote.searchParams.get('launch')!)).toEqual({ args: [DEVICE_DISABLED_FEATURES] });
    expect(remote.searchParams.get('timeout')).toBe('0');
    expect(deviceContextOptions(null)).toEqual({});
    const raw = 'ws://127.0.0.1:9222/devtools/browser/abc';
    expect(deviceEndpoint(raw, egress).toString()).toBe(raw);
    expect(isSharedBrowserEndpoint(new URL(raw))).toBe(true);
    expect(isSharedBrowserEndpoint(remote)).toBe(false);
    expect(() => deviceEndpoint('not a url', null)).toThrow(/BROWSERLESS_URL/);
  });

  it('hands the proxy only to endpoints on this machine, which can reach its loopback address', () => {
    expect(isLocalEndpoint('ws://127.0.0.1:3000?token=x')).toBe(true);
    expect(isLocalEndpoint('ws://localhost:3000')).toBe(true);
    expect(isLocalEndpoint('ws://[::1]:3000')).toBe(true);
    expect(isLocalEndpoint('wss://browserless.internal:3000')).toBe(false);
    expect(isLocalEndpoint('not a url')).toBe(false);
  });

  it("reaches the HTTP side with the token and nothing else of the query", () => {
    expect(httpUrl('wss://b.example:3000/chromium?token=t&launch=%7B%7D', '/pressure')).toBe('https://b.example:3000/pressure?token=t');
    expect(httpUrl('ws://127.0.0.1:9222/devtools/browser/abc', '/json/version')).toBe('http://127.0.0.1:9222/json/version');
  });
});

describe("the remote pool's capacity", () => {
  let server: Server;
  let port: number;
  /** What GET /pressure answers next; `hang` never answers. */
  let answer: { status: number; body: unknown } | 'hang';
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(request.url ?? '');
      if (answer === 'hang') return;
      response.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const pressure = (fields: Record<string, unknown>) => ({
    status: 200,
    body: { pressure: { cpu: 99, memory: 50, isAvailable: false, reason: 'cpu', maxQueued: 0, recentlyRejected: 0, ...fields } },
  });
  // Generous for an answer on a loaded machine (the first fetch of a process sets undici up);
  // silence is still cut off at this bound.
  const TIMEOUT_MS = 2_000;
  const read = () => readRemoteCapacity(new URL(`ws://127.0.0.1:${port}/?token=secret`), TIMEOUT_MS);

  it('reads the limit and the browsers running or queued, with the token', async () => {
    answer = pressure({ maxConcurrent: 2, running: 1, queued: 0 });
    expect(await read()).toEqual({ maxConcurrent: 2, inUse: 1 });
    expect(seen.at(-1)).toBe('/pressure?token=secret');
    answer = pressure({ maxConcurrent: 2, running: 2, queued: 1 });
    expect(await read()).toEqual({ maxConcurrent: 2, inUse: 3 });
  });

  it('reads no limit from -1 or null', async () => {
    answer = pressure({ maxConcurrent: -1, running: 5, queued: 0 });
    expect(await read()).toEqual({ maxConcurrent: null, inUse: 5 });
    answer = pressure({ maxConcurrent: null, running: 5, queued: 0 });
    expect(await read()).toEqual({ maxConcurrent: null, inUse: 5 });
  });

  it('knows nothing from a refusal, an answer of another shape, or silence past the timeout', async () => {
    answer = { status: 401, body: 'Unauthorized' };
    expect(await read()).toBeNull();
    answer = { status: 200, body: { version: '1.0' } };
    expect(await read()).toBeNull();
    answer = 'hang';
    const started = Date.now();
    expect(await read()).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
  });
});
