import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EGRESS_REFUSAL_HEADER } from '../../server/net/egress-proxy';
import { makeTempDir, startRemoteChromium } from '../support/browser-fixtures';
import { startBrowserlessServer } from '../support/browserless-server';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { allScopes, createTenant, startTestService, type TestService } from '../support/test-service';
import { ffprobe } from '../support/video-probe';

// A client connected through cdp_url cannot leave its device: the device egress policy
// holds for its navigations, and in a browser devices share (the browserless provider)
// it sees and reaches only its own device's context.

interface Site {
  port: number;
  hits: string[];
  url(pathname: string): string;
  close(): Promise<void>;
}

async function startSite(): Promise<Site> {
  const hits: string[] = [];
  const server = http.createServer((request, response) => {
    hits.push(request.url ?? '');
    response.setHeader('content-type', 'text/html; charset=utf-8');
    if (request.url === '/cookies') response.end(`<!doctype html><title>Cookies</title><p id="cookies">${(request.headers.cookie ?? '').replace(/[<>&]/g, '')}</p>`);
    else response.end(`<!doctype html><title>Page ${request.url}</title><p>Hello</p>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hits,
    url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A new CDP session's cdp_url, on the address the test reaches; it holds the device until deleted. */
async function cdpUrl(test: TestService, api: ApiCall, device: string): Promise<string> {
  const created = await api('POST', `/v1/devices/${device}/cdp`, {});
  expect(created.status).toBe(201);
  const url = new URL(created.body.cdp_url);
  return `${test.url.replace(/^http/, 'ws')}${url.pathname}${url.search}`;
}

/** Deletes the CDP session of `url`, freeing its device for tasks. */
async function deleteCdp(api: ApiCall, url: string): Promise<void> {
  expect((await api('DELETE', `/v1/cdp_sessions/${new URL(url).pathname.split('/')[3]}`)).status).toBe(204);
}

async function newDevice(api: ApiCall, spaceId: string): Promise<string> {
  const created = await api('POST', '/v1/devices', { space_id: spaceId });
  expect(created.status).toBe(201);
  cleanups.push(() => api('DELETE', `/v1/devices/${created.body.id}`));
  return created.body.id;
}

async function runTask(api: ApiCall, device: string, prompt: string): Promise<any> {
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt });
  expect(submitted.status).toBe(202);
  return waitForTaskEnd(api, submitted.body.id);
}

describe('the device egress policy through CDP', () => {
  it('a navigation to a blocked loopback address fails and never reaches it; an allowed one works', async () => {
    const allowed = await startSite();
    const privateSite = await startSite();
    cleanups.push(() => allowed.close(), () => privateSite.close());
    const test = await startTestService({ OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'false', OPERATOR_TEST_ALLOW_DESTINATIONS: `127.0.0.1:${allowed.port}` });
    cleanups.push(() => test.stop());
    const tenant = await createTenant(test);
    const api = apiClient(test.url, await tenant.key(allScopes));
    const device = await newDevice(api, tenant.spaceId);

    const browser = await puppeteer.connect({ browserWSEndpoint: await cdpUrl(test, api, device), defaultViewport: null });
    try {
      const page = await browser.newPage();
      await page.goto(allowed.url('/fine'));
      expect(await page.title()).toBe('Page /fine');
      // The egress proxy answers in the destination's place: 403, marked as its refusal.
      for (const target of [privateSite.url('/admin'), `${test.url}/v1/whoami`]) {
        const refused = await page.goto(target);
        expect(refused?.status()).toBe(403);
        expect(refused?.headers()[EGRESS_REFUSAL_HEADER.toLowerCase()]).toBe('destination_blocked');
      }
      // Nor from inside the page.
      const fetched = await page.evaluate(async (target) => fetch(target).then(() => 'reached', () => 'blocked'), privateSite.url('/from-page'));
      expect(fetched).toBe('blocked');
    } finally {
      await browser.disconnect();
    }
    expect(privateSite.hits).toEqual([]);
  });
});

describe('a browser that devices share (browserless provider on a raw DevTools endpoint)', () => {
  it("a client sees and reaches only its device's context; its cookies stay there; Browser.close leaves the browser running", async () => {
    const site = await startSite();
    const profile = await makeTempDir('operator-cdp-remote-');
    const remote = await startRemoteChromium(profile.dir);
    cleanups.push(() => site.close(), () => profile.remove(), () => remote.stop());
    const test = await startTestService({ OPERATOR_BROWSER: 'browserless', BROWSERLESS_URL: remote.webSocketUrl });
    cleanups.push(() => test.stop());
    const tenant = await createTenant(test);
    const api = apiClient(test.url, await tenant.key(allScopes));
    const mine = await newDevice(api, tenant.spaceId);
    const neighbour = await newDevice(api, tenant.spaceId);
    expect((await runTask(api, neighbour, `go to ${site.url('/neighbour')} then return the title`)).status).toBe('succeeded');
    const endpoint = new URL(remote.webSocketUrl);
    const allTargets = (await (await fetch(`http://${endpoint.host}/json/list`)).json()) as Array<{ id: string; url: string }>;
    const neighbourTarget = allTargets.find((target) => target.url.endsWith('/neighbour'));
    expect(neighbourTarget).toBeDefined();

    // The raw protocol first: what Playwright never sends.
    const url = await cdpUrl(test, api, mine);
    const raw = new WebSocket(url);
    await new Promise((resolve, reject) => raw.once('open', resolve).once('error', reject));
    let nextId = 1;
    const send = (method: string, params: object = {}) =>
      new Promise<any>((resolve) => {
        const id = nextId++;
        const onMessage = (data: WebSocket.RawData) => {
          const message = JSON.parse(data.toString());
          if (message.id !== id) return;
          raw.off('message', onMessage);
          resolve(message);
        };
        raw.on('message', onMessage);
        raw.send(JSON.stringify({ id, method, params }));
      });
    const urls = ((await send('Target.getTargets')).result.targetInfos as Array<{ url: string }>).map((info) => info.url);
    expect(urls).not.toContain(site.url('/neighbour'));
    expect((await send('Target.attachToTarget', { targetId: neighbourTarget!.id, flatten: true })).error.message).toMatch(/No target/);
    expect((await send('Target.closeTarget', { targetId: neighbourTarget!.id })).error.message).toMatch(/No target/);
    expect((await send('Target.activateTarget', { targetId: neighbourTarget!.id })).error.message).toMatch(/No target/);
    expect((await send('Storage.getCookies', { browserContextId: 'ANOTHER' })).error.message).toMatch(/context/);
    expect((await send('Browser.getWindowBounds', { windowId: 1 })).error.message).toMatch(/share/);
    // An extension is the whole browser's: Stagehand 4's is for devices of the local provider only.
    expect((await send('Extensions.getExtensions')).error).toEqual({ code: -32000, message: expect.stringMatching(/Stagehand 4 needs a device of the local provider/) });
    const created = (await send('Target.createTarget', { url: 'about:blank' })).result.targetId as string;
    const infos = (await send('Target.getTargets')).result.targetInfos as Array<{ targetId: string; browserContextId: string }>;
    expect(infos.map((info) => info.targetId)).toContain(created);
    // Every target it sees is in one context, the device's.
    expect(new Set(infos.map((info) => info.browserContextId)).size).toBe(1);
    raw.close();
    await new Promise((resolve) => raw.once('close', resolve));

    // Puppeteer, with the same URL: the device's existing pages (their tabs attached for its
    // filter), none of the neighbour's; a page may not be traced in a shared browser.
    const viaPuppeteer = await puppeteer.connect({ browserWSEndpoint: url, defaultViewport: null });
    const existing = await viaPuppeteer.pages();
    expect(existing.map((each) => each.url())).toContain('about:blank');
    expect(existing.map((each) => each.url())).not.toContain(site.url('/neighbour'));
    const pageSession = await existing[0]!.createCDPSession();
    expect(((await pageSession.send('Browser.getVersion')) as { product: string }).product).toMatch(/Chrom/);
    await expect(pageSession.send('Tracing.start')).rejects.toThrow(/share/);
    await viaPuppeteer.disconnect();

    const browser = await chromium.connectOverCDP(url);
    const context = browser.contexts()[0]!;
    expect(context.pages().map((page) => page.url())).not.toContain(site.url('/neighbour'));
    const page = await context.newPage();
    await page.goto(site.url('/mine'));
    expect(await page.title()).toBe('Page /mine');
    await context.addCookies([{ name: 'mine_only', value: '1', url: site.url('/') }]);
    expect(browser.contexts()).toHaveLength(1);
    await browser.close();
    await deleteCdp(api, url);

    // The shared browser still runs the neighbour, which never got the cookie; the device did.
    const neighbourTask = await runTask(api, neighbour, `go to ${site.url('/cookies')} then return the text of "#cookies"`);
    expect(neighbourTask.status).toBe('succeeded');
    expect(JSON.stringify(neighbourTask.result)).not.toContain('mine_only');
    const myTask = await runTask(api, mine, `go to ${site.url('/cookies')} then return the text of "#cookies"`);
    expect(JSON.stringify(myTask.result)).toContain('mine_only=1');
  });
});

describe('a real browserless server', () => {
  it('Puppeteer connects to a device through cdp_url, and the connection is recorded', async () => {
    const site = await startSite();
    const browserless = await startBrowserlessServer({ concurrent: 2, queued: 0 });
    cleanups.push(() => site.close(), () => browserless.stop());
    const test = await startTestService({ OPERATOR_BROWSER: 'browserless', BROWSERLESS_URL: browserless.url });
    cleanups.push(() => test.stop());
    const tenant = await createTenant(test);
    const key = await tenant.key(allScopes);
    const api = apiClient(test.url, key);
    const device = await newDevice(api, tenant.spaceId);
    const url = await cdpUrl(test, api, device);
    const browser = await puppeteer.connect({ browserWSEndpoint: url, defaultViewport: null });
    const page = await browser.newPage();
    await page.goto(site.url('/browserless'));
    expect(await page.title()).toBe('Page /browserless');
    // The device is held: no second CDP session while this one is connected.
    expect((await api('POST', `/v1/devices/${device}/cdp`, {})).body.error.code).toBe('device_busy');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await browser.disconnect();

    // Recorded on a shared browser too, from the device's own context.
    const route = `${test.url}/v1/cdp_sessions/${new URL(url).pathname.split('/')[3]}/recording`;
    const deadline = Date.now() + 20_000;
    let video = await fetch(route, { headers: { Authorization: `Bearer ${key}` } });
    while (video.status === 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      video = await fetch(route, { headers: { Authorization: `Bearer ${key}` } });
    }
    expect(video.status).toBe(200);
    expect((await ffprobe(new Uint8Array(await video.arrayBuffer()))).duration).toBeGreaterThan(0.5);
  });
});
