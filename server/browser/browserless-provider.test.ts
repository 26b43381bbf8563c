import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserlessProvider } from './browserless-provider.js';
import { isRunning } from '../os/processes.js';
import { MemoryStateStore } from '../../test/support/memory-state-store.js';
import { makeTempDir, startPageServer, startRemoteChromium, type PageServer, type RemoteChromium } from '../../test/support/browser-fixtures.js';

// The provider against a plain Chromium started with --remote-debugging-port: a raw
// DevTools endpoint whose one browser every device shares, each in its own context.
// Against a real browserless server: test/integration/devices-browserless-server.test.ts.

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

describe('browserless provider against a plain CDP endpoint', () => {
  it('keeps cookies and localStorage across close and launch through the state store, isolates devices, and leaves the remote browser running', async () => {
    const store = new MemoryStateStore();
    const provider = new BrowserlessProvider({ endpoint: remote.webSocketUrl, deviceStates: store, egress: null, dataDir: path.join(temp.dir, 'service'), keepSecs: 20 });
    const first = await provider.launch({ deviceId: 'remote-a', orgId: 'org-1' });
    expect(first.pid).toBeNull();
    let closedEvents = 0;
    first.onDisconnected(() => (closedEvents += 1));
    const driver = await first.page();
    await driver.navigate(server.url('/set-cookie'));
    await driver.navigate(server.url('/set-storage'));
    expect((await driver.observe()).title).toBe('Storage set');
    await first.close();
    expect(closedEvents).toBe(0);
    expect(store.states.get('remote-a')).toMatchObject({
      cookies: [expect.objectContaining({ name: 'device_session', value: 'kept', domain: 'localhost', expires: expect.any(Number) })],
      origins: [{ origin: server.url('').replace(/\/$/, ''), localStorage: [{ name: 'device_note', value: 'kept' }] }],
    });

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
    await againDriver.navigate(server.url('/show-storage'));
    expect(await againDriver.textOf('#storage')).toBe('kept');
    const neighbourDriver = await neighbour.page();
    await neighbourDriver.navigate(server.url('/show-cookie'));
    expect(await neighbourDriver.textOf('#cookie')).toBe('none');
    await neighbourDriver.navigate(server.url('/show-storage'));
    expect(await neighbourDriver.textOf('#storage')).toBe('none');
    // Storage was read and written from stand-in documents the browser served itself.
    expect(server.requests.filter((line) => line.endsWith(' /'))).toEqual([]);

    await provider.destroyProfile('remote-a');
    expect(store.states.has('remote-a')).toBe(false);
    await provider.shutdown();
    expect(store.states.has('remote-b')).toBe(true);
    expect(await isRunning(remote.process.pid!)).toBe(true);
  });

  it('starts a device whose saved state does not parse, with nothing restored', async () => {
    const store = new MemoryStateStore();
    store.states.set('remote-damaged', { cookies: 'not a list' });
    const provider = new BrowserlessProvider({ endpoint: remote.webSocketUrl, deviceStates: store, egress: null, dataDir: path.join(temp.dir, 'service'), keepSecs: 20 });
    const handle = await provider.launch({ deviceId: 'remote-damaged', orgId: 'org-1' });
    const driver = await handle.page();
    await driver.navigate(server.url('/show-cookie'));
    expect(await driver.textOf('#cookie')).toBe('none');
    await provider.shutdown();
  });

  it('reports a remote browser that goes away', async () => {
    const provider = new BrowserlessProvider({ endpoint: remote.webSocketUrl, deviceStates: new MemoryStateStore(), egress: null, dataDir: path.join(temp.dir, 'service'), keepSecs: 20 });
    const handle = await provider.launch({ deviceId: 'remote-c', orgId: 'org-1' });
    const disconnected = new Promise<void>((resolve) => handle.onDisconnected(resolve));
    await remote.stop();
    await disconnected;
    await provider.shutdown();
  });
});
