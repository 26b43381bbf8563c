import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// Stagehand 4 (@browserbasehq/stagehand 4.x) against a device's cdp_url, on real Chromium
// and PostgreSQL. Stagehand 4 runs inside a browser extension of its own, which a device
// does not carry and a client may not load (docs/api.md, "Stagehand 4"): connecting fails
// at its first command with the service's refusal, and the device is left as it was.

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
async function rawClient(url: string): Promise<{ send: (method: string, params?: object) => Promise<any>; close: () => void }> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 1;
  const waiting = new Map<number, (message: any) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.id !== undefined) waiting.get(message.id)?.(message);
  });
  return {
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
});
