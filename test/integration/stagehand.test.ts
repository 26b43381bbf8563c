import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'puppeteer-core';
import WebSocket from 'ws';
import { parsePublicId } from '../../server/domain/ids';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// Stagehand 4 (@browserbasehq/stagehand 4.x) against a device's cdp_url, on real Chromium
// and PostgreSQL. Stagehand 4 runs inside a browser extension of its own, which a device
// does not carry and a client may not load (docs/api.md, "Stagehand 4"): connecting fails
// at its first command with the service's refusal, and the device is left as it was. Nor
// does a client ever see the browser's own pages (chrome://), which such an extension
// could open.

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
const devices = new DeviceTracker(() => api);

beforeAll(async () => {
  test = await startTestService();
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(allScopes));
});
afterEach(() => devices.deleteAll());
afterAll(() => test?.stop());

/** A new CDP session's cdp_url, on the address the test reaches (path and secret unchanged). */
async function cdpUrl(device: string): Promise<string> {
  const created = await api('POST', `/v1/devices/${device}/cdp`, {});
  expect(created.status).toBe(201);
  const url = new URL(created.body.cdp_url);
  return `${test.url.replace(/^http/, 'ws')}${url.pathname}${url.search}`;
}

/** A CDP session once the previous connection has given the device's slot back (within about a second). */
async function cdpUrlWhenFree(device: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const created = await api('POST', `/v1/devices/${device}/cdp`, {});
    if (created.status === 201) {
      const url = new URL(created.body.cdp_url);
      return `${test.url.replace(/^http/, 'ws')}${url.pathname}${url.search}`;
    }
    expect(created.body.error.code).toBe('device_busy');
    if (Date.now() > deadline) throw new Error('the device slot was not given back in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A raw DevTools client, for the commands Stagehand sends and what the browser then holds. */
async function rawClient(url: string): Promise<{ send: (method: string, params?: object) => Promise<any>; events: any[]; close: () => void }> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 1;
  const waiting = new Map<number, (message: any) => void>();
  const events: any[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.id !== undefined) waiting.get(message.id)?.(message);
    else events.push(message);
  });
  return {
    events,
    send: (method, params = {}) =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/** The URLs of the device's targets (an extension's service worker among them, were one loaded), through a new CDP session. */
async function browserTargetUrls(device: string): Promise<string[]> {
  const client = await rawClient(await cdpUrlWhenFree(device));
  try {
    const answer = await client.send('Target.getTargets');
    return answer.result.targetInfos.map((info: { url: string }) => info.url);
  } finally {
    client.close();
  }
}

/** The device's browser as the service drives it (not a client's filtered view). */
function serviceBrowser(device: string): Browser {
  const handle = test.service.services.browserPool.get(parsePublicId('device', device)!);
  expect(handle).toBeDefined();
  return (handle as unknown as { browser: Browser }).browser;
}

describe('Stagehand 4 through cdp_url', () => {
  it('fails at its first command, Extensions.getExtensions, with the service refusal, and loads nothing into the device', async () => {
    // Imported here: the package needs Node >= 22.18 (the project's pinned Node 24 runs the tests).
    const { localBrowser } = await import('@browserbasehq/stagehand');
    const device = await devices.create(tenant.spaceId);
    const connecting = localBrowser.connect({ cdpUrl: await cdpUrl(device) });
    await expect(connecting).rejects.toThrow("Extensions.getExtensions is not available through this service's CDP access");
    const urls = await browserTargetUrls(device);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.filter((url) => url.startsWith('chrome-extension:'))).toEqual([]);
  });

  it('refuses Extensions.loadUnpacked even of the Stagehand extension the service has on disk, and every other Extensions method', async () => {
    const { fileURLToPath } = await import('node:url');
    const shipped = fileURLToPath(new URL('../../node_modules/@browserbasehq/stagehand/dist/extension/', import.meta.url));
    const device = await devices.create(tenant.spaceId);
    const client = await rawClient(await cdpUrl(device));
    try {
      for (const [method, params] of [
        ['Extensions.loadUnpacked', { path: shipped }],
        ['Extensions.getExtensions', {}],
        ['Extensions.uninstall', { id: 'fbohpppkldddlcjfglmopljfkekkdajk' }],
      ] as const) {
        const answer = await client.send(method, params);
        expect(answer.error).toEqual({ code: -32000, message: expect.stringContaining(`${method} is not available through this service's CDP access`) });
      }
      // Nor can a client open the pages of an extension.
      const page = await client.send('Target.createTarget', { url: 'chrome-extension://fbohpppkldddlcjfglmopljfkekkdajk/wake-service-worker.html' });
      expect(page.error?.code).toBe(-32000);
      const targets = await client.send('Target.getTargets');
      expect(targets.result.targetInfos.filter((info: { url: string }) => info.url.startsWith('chrome-extension:'))).toEqual([]);
    } finally {
      client.close();
    }
  });

  it('never shows a client the browser\'s own pages, even of type page: not listed, not attachable, not auto-attached', async () => {
    const device = await devices.create(tenant.spaceId);
    const url = await cdpUrl(device);
    // A chrome:// page in the device's browser, as an extension with the tabs permission could open: made by the service here.
    const session = await serviceBrowser(device).target().createCDPSession();
    const { targetId } = await session.send('Target.createTarget', { url: 'chrome://version/', background: true });
    try {
      const { targetInfo } = await session.send('Target.getTargetInfo', { targetId });
      expect(targetInfo.type).toBe('page');
      const client = await rawClient(url);
      try {
        const listed = (await client.send('Target.getTargets')).result.targetInfos;
        expect(listed.length).toBeGreaterThan(0);
        expect(listed.filter((info: { url: string }) => /^(chrome|chrome-untrusted|devtools|chrome-extension):/.test(info.url))).toEqual([]);
        expect((await client.send('Target.attachToTarget', { targetId, flatten: true })).error?.code).toBe(-32000);
        expect((await client.send('Target.getTargetInfo', { targetId })).error?.code).toBe(-32000);
        expect((await client.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{ type: 'page' }] })).error).toBeUndefined();
        const attachedEvents = () => client.events.filter((event) => event.method === 'Target.attachedToTarget').map((event) => event.params.targetInfo);
        // The device's own page attaches (its event may trail the answer); the chrome:// page never does.
        const deadline = Date.now() + 5_000;
        while (attachedEvents().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        const attached = attachedEvents();
        expect(attached.length).toBeGreaterThan(0);
        expect(attached.filter((info: { targetId: string; url: string }) => info.targetId === targetId || info.url.startsWith('chrome:'))).toEqual([]);
      } finally {
        client.close();
      }
    } finally {
      await session.send('Target.closeTarget', { targetId }).catch(() => undefined);
      await session.detach();
    }
  });
});
