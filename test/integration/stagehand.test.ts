import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'puppeteer-core';
import { parsePublicId } from '../../server/domain/ids';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { rawCdpClient } from '../support/raw-cdp-client';

// Stagehand 4 (@browserbasehq/stagehand 4.x) against a device's cdp_url (local provider), on
// real Chromium and PostgreSQL. Its runtime is a browser extension: the service loads its own
// copy for the connection, with no file access, in a browser that opens none of its own pages
// (a blocklist in the profile), admits the extension worker's own connection by its
// handshake, hides browser pages from clients, and uninstalls it when the connection ends
// (docs/api.md, "Stagehand 4").

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let page: { url: string; close: () => Promise<void> };
const devices = new DeviceTracker(() => api);

/** The test's page, on loopback (tests allow private destinations). */
async function startPage(): Promise<typeof page> {
  const server = http.createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end('<!doctype html><title>Stagehand test page</title><p>Hello</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  page = await startPage();
  test = await startTestService();
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(allScopes));
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await page?.close();
});

/** A CDP session's cdp_url once the device's slot is free (a previous connection gives it back within about a second). */
async function cdpUrl(device: string): Promise<string> {
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

/** The device's browser as the service drives it (not a client's filtered view). */
function serviceBrowser(device: string): Browser {
  const handle = test.service.services.browserPool.get(parsePublicId('device', device)!);
  expect(handle).toBeDefined();
  return (handle as unknown as { browser: Browser }).browser;
}

/** The URLs of every target the device's browser holds, as the service itself sees them. */
async function browserTargetUrls(device: string): Promise<string[]> {
  const session = await serviceBrowser(device).target().createCDPSession();
  try {
    const { targetInfos } = await session.send('Target.getTargets');
    return targetInfos.map((info) => info.url);
  } finally {
    await session.detach();
  }
}

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('Stagehand 4 through cdp_url (local provider)', () => {
  it('connects in LOCAL mode, opens a page and reads its title; a forged second connection is refused meanwhile; on close the extension is gone and a task runs', async () => {
    // Imported here: the package needs Node >= 22.18 (the project's pinned Node 24 runs the tests).
    const { localBrowser, Stagehand } = await import('@browserbasehq/stagehand');
    const device = await devices.create(tenant.spaceId);
    const url = await cdpUrl(device);
    const browser = await localBrowser.connect({ cdpUrl: url });
    // No model (page methods only) and no telemetry (off unless an endpoint is given).
    const stagehand = await Stagehand.create({ browser, logging: { level: 'off' } });
    try {
      const opened = await browser.context.newPage();
      await opened.goto(page.url);
      expect(await opened.title()).toBe('Stagehand test page');
      // The right secret without the extension worker's handshake: refused while Stagehand is connected.
      await expect(rawCdpClient(url)).rejects.toThrow(/Unexpected server response: 4\d\d/);
    } finally {
      await stagehand.close();
      await browser.disconnect();
    }
    await waitFor(async () => !(await browserTargetUrls(device)).some((each) => each.startsWith('chrome-extension:')));
    const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${page.url} then return the title` });
    expect(submitted.status).toBe(202);
    const task = await waitForTaskEnd(api, submitted.body.id);
    expect(task.status).toBe('succeeded');
  });

  it('loads the extension without file access, closes and hides the browser pages it opens, and uninstalls it when the connection ends', async () => {
    const device = await devices.create(tenant.spaceId);
    const client = await rawCdpClient(await cdpUrl(device));
    const [listed] = (await client.send('Extensions.getExtensions')).result.extensions;
    expect(listed).toMatchObject({ name: 'Stagehand Runtime', enabled: true, path: '' });
    const { targetInfos } = (await client.send('Target.getTargets')).result;
    const worker = targetInfos.find((info: { type: string; url: string }) => info.type === 'service_worker' && info.url.startsWith(`chrome-extension://${listed.id}/`));
    expect(worker).toBeDefined();
    const { sessionId } = (await client.send('Target.attachToTarget', { targetId: worker.targetId, flatten: true })).result;
    const evaluate = async (expression: string) =>
      (await client.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId)).result.result.value;
    expect(await evaluate('chrome.extension.isAllowedFileSchemeAccess()')).toBe(false);
    expect(await evaluate(`fetch('file:///etc/hostname').then(() => 'read', (error) => 'failed: ' + error.message)`)).toMatch(/^failed/);
    // A session the client holds on the device's page, when the extension takes that tab to
    // the browser's extensions page: it finds Chrome's error page, never the page's bindings.
    const pageTarget = targetInfos.find((info: { type: string; url: string }) => info.type === 'page' && !info.url.startsWith('chrome-extension:'));
    const pageSession = (await client.send('Target.attachToTarget', { targetId: pageTarget.targetId, flatten: true })).result.sessionId;
    let watching = true;
    let sessionGone = false;
    const seen = new Set<string>();
    const watch = (async () => {
      while (watching) {
        const answer = await client.send('Runtime.evaluate', { expression: 'location.href + " " + typeof chrome.developerPrivate', returnByValue: true }, pageSession);
        if (answer.result?.result?.value !== undefined) seen.add(answer.result.result.value);
        else if (answer.error !== undefined && answer.error.message.includes('Session')) sessionGone = true;
        if (sessionGone) return;
      }
    })();
    await evaluate(`chrome.tabs.query({}).then((tabs) => Promise.all(tabs.map((tab) => chrome.tabs.update(tab.id, { url: 'chrome://extensions/' }).catch(() => undefined))))`);
    await waitFor(() => [...seen].some((each) => each.startsWith('chrome-error:')) || sessionGone);
    watching = false;
    await watch;
    expect([...seen].filter((each) => each.startsWith('chrome:') || !each.endsWith('undefined'))).toEqual([]);
    // Tabs the extension opens on browser or host pages are closed, and never shown.
    await evaluate(`Promise.all(['chrome://settings/', 'file:///etc/hostname'].map((url) => chrome.tabs.create({ url })))`);
    await waitFor(async () => !(await browserTargetUrls(device)).some((each) => each.startsWith('chrome://settings') || each.startsWith('file:')));
    const visible = (await client.send('Target.getTargets')).result.targetInfos.map((info: { url: string }) => info.url);
    expect(visible.filter((each: string) => /^(chrome|devtools|chrome-untrusted|file):/.test(each))).toEqual([]);
    await client.close();
    await waitFor(async () => !(await browserTargetUrls(device)).some((each) => each.startsWith('chrome-extension:')));
  });

  it('refuses Extensions.loadUnpacked of any path, every other Extensions method, and another extension\'s pages', async () => {
    const { fileURLToPath } = await import('node:url');
    const shipped = fileURLToPath(new URL('../../node_modules/@browserbasehq/stagehand/dist/extension/', import.meta.url));
    const device = await devices.create(tenant.spaceId);
    const client = await rawCdpClient(await cdpUrl(device));
    try {
      for (const [method, params] of [
        ['Extensions.loadUnpacked', { path: shipped }],
        ['Extensions.loadUnpacked', { path: '/tmp' }],
        ['Extensions.uninstall', { id: 'fbohpppkldddlcjfglmopljfkekkdajk' }],
        ['Extensions.getStorageItems', { id: 'fbohpppkldddlcjfglmopljfkekkdajk', storageArea: 'local' }],
      ] as const) {
        const answer = await client.send(method, params);
        expect(answer.error).toEqual({ code: -32000, message: expect.stringContaining(`${method} is not available through this service's CDP access`) });
      }
      const foreign = await client.send('Target.createTarget', { url: 'chrome-extension://fbohpppkldddlcjfglmopljfkekkdajk/wake-service-worker.html' });
      expect(foreign.error?.code).toBe(-32000);
      const settings = await client.send('Target.createTarget', { url: 'chrome://settings/' });
      expect(settings.error?.code).toBe(-32000);
    } finally {
      await client.close();
    }
  });

  it('a device\'s browser opens none of its own pages, whoever asks, and a client sees none', async () => {
    const device = await devices.create(tenant.spaceId);
    const url = await cdpUrl(device);
    // Even the service's own connection, which no rule of the bridge confines, gets Chrome's error page.
    const session = await serviceBrowser(device).target().createCDPSession();
    const { targetId } = await session.send('Target.createTarget', { url: 'chrome://version/', background: true });
    try {
      const { sessionId } = await session.send('Target.attachToTarget', { targetId, flatten: true });
      const page = session.connection()!.session(sessionId)!;
      let shown = '';
      await waitFor(async () => {
        const answer = await page.send('Runtime.evaluate', { expression: 'location.href + " " + typeof chrome?.send', returnByValue: true }).catch(() => null);
        shown = answer?.result.value ?? '';
        return shown.startsWith('chrome-error:') || shown.startsWith('chrome:');
      });
      expect(shown).toBe('chrome-error://chromewebdata/ undefined');
      const client = await rawCdpClient(url);
      try {
        const listed = (await client.send('Target.getTargets')).result.targetInfos;
        expect(listed.length).toBeGreaterThan(0);
        expect(listed.filter((info: { url: string }) => /^(chrome|chrome-untrusted|devtools|chrome-extension):/.test(info.url))).toEqual([]);
      } finally {
        await client.close();
      }
    } finally {
      await session.send('Target.closeTarget', { targetId }).catch(() => undefined);
      await session.detach();
    }
  });
});
