import { existsSync } from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserlessProvider, deviceEndpoint, isLocalEndpoint, isSharedBrowserEndpoint } from './browserless-provider.js';
import { isRunning } from './chromium-process.js';
import { COOKIE_FILE_NAME } from './cookie-store.js';
import { makeTempDir, startPageServer, startRemoteChromium, type PageServer, type RemoteChromium } from './test-support.js';

let server: PageServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let remote: RemoteChromium;

beforeAll(async () => {
  server = await startPageServer();
  temp = await makeTempDir('browserless-provider-');
  remote = await startRemoteChromium(path.join(temp.dir, 'remote-profile'));
});

afterAll(async () => {
  await remote?.stop();
  await server?.close();
  await temp?.remove();
});

describe('browserless endpoint URL', () => {
  it('adds the device profile as a --user-data-dir query parameter, keeping the token', () => {
    const url = deviceEndpoint('ws://browserless:3000?token=secret', 'device-1');
    expect(url.searchParams.get('token')).toBe('secret');
    expect(url.searchParams.get('--user-data-dir')).toBe('/tmp/profiles/device-1');
    expect(isSharedBrowserEndpoint(url)).toBe(false);
    expect(isSharedBrowserEndpoint(new URL('ws://127.0.0.1:9222/devtools/browser/abc'))).toBe(true);
  });
});

describe('browserless egress', () => {
  it('passes the egress proxy flags to the browser browserless launches', () => {
    const egress = { url: 'http://127.0.0.1:4100', refusedSince: () => false };
    const url = deviceEndpoint('ws://127.0.0.1:3000?token=secret', 'device-1', egress);
    expect(url.searchParams.get('--proxy-server')).toBe('http://127.0.0.1:4100');
    expect(url.searchParams.get('--proxy-bypass-list')).toBe('<-loopback>');
    expect(url.searchParams.get('--force-webrtc-ip-handling-policy')).toBe('disable_non_proxied_udp');
    expect(url.searchParams.get('token')).toBe('secret');
  });

  it('hands the proxy only to endpoints on this machine, which can reach its loopback address', () => {
    expect(isLocalEndpoint('ws://127.0.0.1:3000?token=x')).toBe(true);
    expect(isLocalEndpoint('ws://localhost:3000')).toBe(true);
    expect(isLocalEndpoint('ws://[::1]:3000')).toBe(true);
    expect(isLocalEndpoint('wss://browserless.internal:3000')).toBe(false);
    expect(isLocalEndpoint('not a url')).toBe(false);
  });
});

describe('browserless provider against a plain CDP endpoint', () => {
  it('connects, navigates, keeps cookies across close and launch, isolates devices, and leaves the remote browser running', async () => {
    const provider = new BrowserlessProvider({ endpoint: remote.webSocketUrl, dataDir: temp.dir, egress: null });
    const first = await provider.launch({ deviceId: 'remote-a', orgId: 'org-1' });
    expect(first.pid).toBeNull();
    let closedEvents = 0;
    first.onDisconnected(() => (closedEvents += 1));
    const driver = await first.page();
    await driver.navigate(server.url('/set-cookie'));
    expect((await driver.observe()).title).toBe('Cookie set');
    await first.close();
    expect(closedEvents).toBe(0);
    expect(existsSync(path.join(temp.dir, 'profiles', 'remote-a', COOKIE_FILE_NAME))).toBe(true);

    expect(await isRunning(remote.process.pid!)).toBe(true);
    const probe = await puppeteer.connect({ browserWSEndpoint: remote.webSocketUrl });
    expect(probe.connected).toBe(true);
    await probe.disconnect();

    const [again, neighbour] = await Promise.all([
      provider.launch({ deviceId: 'remote-a', orgId: 'org-1' }),
      provider.launch({ deviceId: 'remote-b', orgId: 'org-2' }),
    ]);
    const againDriver = await again.page();
    await againDriver.navigate(server.url('/show-cookie'));
    expect(await againDriver.textOf('#cookie')).toContain('device_session=kept');
    const neighbourDriver = await neighbour.page();
    await neighbourDriver.navigate(server.url('/show-cookie'));
    expect(await neighbourDriver.textOf('#cookie')).toBe('none');

    await provider.destroyProfile('remote-a');
    expect(existsSync(path.join(temp.dir, 'profiles', 'remote-a'))).toBe(false);
    await provider.shutdown();
    expect(await isRunning(remote.process.pid!)).toBe(true);
  });

  it('reports a remote browser that goes away', async () => {
    const provider = new BrowserlessProvider({ endpoint: remote.webSocketUrl, dataDir: temp.dir, egress: null });
    const handle = await provider.launch({ deviceId: 'remote-c', orgId: 'org-1' });
    const disconnected = new Promise<void>((resolve) => handle.onDisconnected(resolve));
    await remote.stop();
    await disconnected;
    await provider.shutdown();
  });
});
