import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq, sql } from 'drizzle-orm';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, cdpSessions, devices as deviceTable } from '../../db/schema';
import { endUnresumableCdpConnections } from '../../server/domain/cdp/cdp-connection';
import { suspendIdleDevices } from '../../server/domain/devices/device-upkeep';
import { parsePublicId } from '../../server/domain/ids';
import { revokeApiKey } from '../../server/domain/orgs/operator-admin';
import { DeviceTracker } from '../support/device-tracker';
import { startColourPages } from '../support/colour-pages';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { allScopes, createTenant, startAnotherInstance, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { ffprobe, frameColors, isBlue, isRed } from '../support/video-probe';
import { rawCdpClient } from '../support/raw-cdp-client';

// CDP access end to end, on real Chromium and PostgreSQL: Puppeteer and Playwright through
// cdp_url, the task slot it holds, the ways a connection ends, the rules of what a client
// may do, tenancy, and the relay from another instance.

const PUBLIC_URL = 'https://operator.example';

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let key: string;
let pages: { url: (pathname: string) => string; close: () => Promise<void> };
let colourPages: Awaited<ReturnType<typeof startColourPages>>;
const devices = new DeviceTracker(() => api);

/** Pages of the test: a titled page, and one that shows the cookies it was sent. */
async function startPages(): Promise<typeof pages> {
  const server = http.createServer((request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    if (request.url === '/cookies') response.end(`<!doctype html><title>Cookies</title><p id="cookies">${(request.headers.cookie ?? '').replace(/[<>&]/g, '')}</p>`);
    else response.end('<!doctype html><title>CDP test page</title><p>Hello</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

beforeAll(async () => {
  pages = await startPages();
  colourPages = await startColourPages();
  test = await startTestService({ OPERATOR_PUBLIC_URL: PUBLIC_URL });
  tenant = await createTenant(test);
  key = await tenant.key(allScopes);
  api = apiClient(test.url, key);
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await pages?.close();
  await colourPages?.close();
});

interface CdpSession {
  id: string;
  device_id: string;
  cdp_url: string;
  expires_at: string;
}

/**
 * Long enough for a connection's recording to get its first screencast frame on a loaded
 * two-core machine (a recording without one is marked failed, and has no video).
 */
const recordedAWhile = () => new Promise((resolve) => setTimeout(resolve, 2_000));

async function openCdp(device: string, call: ApiCall = api, body: Record<string, unknown> = {}): Promise<CdpSession> {
  const created = await call('POST', `/v1/devices/${device}/cdp`, body);
  expect(created.status).toBe(201);
  return created.body;
}

/** cdp_url on the address the test reaches (its public origin is made up), path and secret unchanged. */
function reachable(session: CdpSession, baseUrl = test.url): string {
  const url = new URL(session.cdp_url);
  return `${baseUrl.replace(/^http/, 'ws')}${url.pathname}${url.search}`;
}

async function cdpRow(id: string) {
  const [row] = await test.service.services.db.select().from(cdpSessions).where(eq(cdpSessions.id, id));
  return row;
}

async function slotHolder(device: string): Promise<string | null> {
  const [row] = await test.service.services.db.select({ cdp: deviceTable.cdpSessionId }).from(deviceTable).where(eq(deviceTable.id, parsePublicId('device', device)!));
  return row?.cdp ?? null;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function runTask(device: string, prompt: string): Promise<any> {
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt });
  expect(submitted.status).toBe(202);
  return waitForTaskEnd(api, submitted.body.id);
}

describe('POST /v1/devices/{id}/cdp', () => {
  it('answers a cdp_session whose cdp_url carries a secret, stored only as a hash, and audits it', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device, api, { ttl_secs: 120 });
    expect(session).toMatchObject({ object: 'cdp_session', device_id: device });
    expect(session.id).toMatch(/^cdp_[0-9a-f-]{36}$/);
    expect(session.cdp_url).toMatch(new RegExp(`^wss://operator\\.example/v1/cdp_sessions/${session.id}/devtools\\?token=cdptok_[A-Za-z0-9_-]{43}$`));
    const lifetime = Date.parse(session.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(100_000);
    expect(lifetime).toBeLessThanOrEqual(121_000);
    const secret = new URL(session.cdp_url).searchParams.get('token')!;
    const [row] = await test.service.services.db.select().from(cdpSessions).where(eq(cdpSessions.id, parsePublicId('cdpSession', session.id)!));
    expect(JSON.stringify(row)).not.toContain(secret);
    const audit = await test.service.services.db.select().from(auditEvents).where(eq(auditEvents.resourceId, session.id));
    expect(audit.map((event) => event.action)).toEqual(['operator.cdp_session.created']);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it('refuses a ttl_secs outside 60..3600 with 400 and param', async () => {
    const device = await devices.create(tenant.spaceId);
    for (const ttl of [59, 3601, 'long']) {
      const refused = await api('POST', `/v1/devices/${device}/cdp`, { ttl_secs: ttl });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_request', param: 'ttl_secs' });
    }
  });

  it("is 404 for another organization's device and cdp session, and needs operator:sessions:control", async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const other = await createTenant(test);
    const otherApi = apiClient(test.url, await other.key(allScopes));
    const foreignDevice = await otherApi('POST', `/v1/devices/${device}/cdp`, {});
    expect(foreignDevice.status).toBe(404);
    expect(foreignDevice.body.error.code).toBe('device_not_found');
    const foreignSession = await otherApi('DELETE', `/v1/cdp_sessions/${session.id}`);
    expect(foreignSession.status).toBe(404);
    expect(foreignSession.body.error.code).toBe('cdp_session_not_found');
    const watchOnly = apiClient(test.url, await tenant.key(['operator:sessions:write', 'operator:devices:read']));
    expect((await watchOnly('POST', `/v1/devices/${device}/cdp`, {})).status).toBe(403);
  });
});

describe('Puppeteer through cdp_url', () => {
  it('opens a page served by the test, reads its title and sets a cookie the next task sees; the slot is held while connected; the secret opens one connection at a time, and again after a task', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const browser = await puppeteer.connect({ browserWSEndpoint: reachable(session), defaultViewport: null });
    try {
      const page = await browser.newPage();
      await page.goto(pages.url('/page'));
      expect(await page.title()).toBe('CDP test page');
      await page.setCookie({ name: 'from_puppeteer', value: 'yes', url: pages.url('/') });

      // The task slot is held: a submit and a sleep are refused, and idle suspend spares it.
      expect(await slotHolder(device)).toBe(parsePublicId('cdpSession', session.id));
      const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: 'return the title' });
      expect(submitted.status).toBe(409);
      expect(submitted.body.error.code).toBe('device_busy');
      expect((await api('POST', `/v1/devices/${device}/sleep`)).body.error.code).toBe('device_busy');
      // A second CDP session cannot be created while this one holds the device.
      expect((await api('POST', `/v1/devices/${device}/cdp`, {})).body.error.code).toBe('device_busy');

      // The secret opened this connection; it opens no other while it is open.
      await expect(puppeteer.connect({ browserWSEndpoint: reachable(session) })).rejects.toThrow(/410/);
    } finally {
      await browser.disconnect();
    }
    // Disconnected, the session stays open for its client but gives the slot back: a task may run.
    await waitFor(async () => (await slotHolder(device)) === null);
    expect((await cdpRow(parsePublicId('cdpSession', session.id)!))?.closedAt).toBeNull();
    const task = await runTask(device, `go to ${pages.url('/cookies')} then return the text of "#cookies"`);
    expect(task.status).toBe('succeeded');
    expect(JSON.stringify(task.result)).toContain('from_puppeteer=yes');
    // The same URL connects again after the task, and finds the page the task left.
    const again = await puppeteer.connect({ browserWSEndpoint: reachable(session), defaultViewport: null });
    try {
      expect((await again.pages()).map((page) => page.url())).toContain(pages.url('/cookies'));
    } finally {
      await again.disconnect();
    }
    await waitFor(async () => (await slotHolder(device)) === null);
    expect((await api('DELETE', `/v1/cdp_sessions/${session.id}`)).status).toBe(204);

    const audit = await test.service.services.db.select().from(auditEvents).where(eq(auditEvents.resourceId, session.id));
    expect(audit.map((event) => event.action).sort()).toEqual([
      'operator.cdp_session.closed',
      'operator.cdp_session.connected',
      'operator.cdp_session.connected',
      'operator.cdp_session.created',
      'operator.cdp_session.disconnected',
      'operator.cdp_session.disconnected',
    ]);
    expect(audit.find((event) => event.action === 'operator.cdp_session.disconnected')?.details).toMatchObject({ device_id: device, reason: 'client_closed' });
  });
});

describe("a fresh device's first tab", () => {
  it("is what a client's first newPage() gets, once: Puppeteer and Playwright see one page, the next newPage() is a new tab", async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const browser = await puppeteer.connect({ browserWSEndpoint: reachable(session), defaultViewport: null });
    let firstTab: string;
    try {
      const [blank] = await browser.pages();
      const page = await browser.newPage();
      firstTab = page.target().url();
      expect(await browser.pages()).toHaveLength(1);
      expect(page.target()).toBe(blank!.target());
      await page.goto(pages.url('/page'));
      expect(await page.title()).toBe('CDP test page');
      const second = await browser.newPage();
      expect(await browser.pages()).toHaveLength(2);
      await second.close();
    } finally {
      await browser.disconnect();
    }
    expect(firstTab).toBe('about:blank');
    await waitFor(async () => (await slotHolder(device)) === null);

    // Another device, through Playwright: the same.
    const other = await devices.create(tenant.spaceId);
    const playwright = await chromium.connectOverCDP(reachable(await openCdp(other)));
    try {
      const context = playwright.contexts()[0]!;
      const page = await context.newPage();
      expect(context.pages()).toEqual([page]);
      await page.goto(pages.url('/page'));
      expect(await page.title()).toBe('CDP test page');
      await context.newPage();
      expect(context.pages()).toHaveLength(2);
    } finally {
      await playwright.close();
    }
  });

  it('is not handed out once a task has used it: the first newPage() is then a new tab', async () => {
    const device = await devices.create(tenant.spaceId);
    expect((await runTask(device, `go to ${pages.url('/page')} then return the title`)).status).toBe('succeeded');
    const browser = await puppeteer.connect({ browserWSEndpoint: reachable(await openCdp(device)), defaultViewport: null });
    try {
      await browser.newPage();
      expect((await browser.pages()).map((page) => page.url()).sort()).toEqual(['about:blank', pages.url('/page')]);
    } finally {
      await browser.disconnect();
    }
  });
});

describe('the task slot', () => {
  it('between connections a task may take the slot: a reconnection meanwhile is 409 device_busy, and connects once the task ended', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const first = await rawCdpClient(reachable(session));
    first.socket.close();
    await first.closed;
    await waitFor(async () => (await slotHolder(device)) === null);
    // A task that parks for a human holds the slot until it is canceled.
    const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: 'ask a human to confirm "go on?"' });
    expect(submitted.status).toBe(202);
    await waitFor(async () => (await api('GET', `/v1/tasks/${submitted.body.id}`)).body.status === 'needs_human');
    await expect(rawCdpClient(reachable(session))).rejects.toThrow(/409/);
    expect((await api('POST', `/v1/tasks/${submitted.body.id}/cancel`, {})).status).toBe(202);
    await waitForTaskEnd(api, submitted.body.id);
    const again = await rawCdpClient(reachable(session));
    expect((await again.send('Browser.getVersion')).result.product).toMatch(/Chrome/);
    expect(await slotHolder(device)).toBe(parsePublicId('cdpSession', session.id));
    again.socket.close();
    await again.closed;
  });

  it('of a task submit and a CDP connection racing for the slot, exactly one wins', async () => {
    for (let round = 0; round < 3; round += 1) {
      const device = await devices.create(tenant.spaceId);
      const session = await openCdp(device);
      const [submitted, connected] = await Promise.all([
        api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${pages.url('/page')} then return the title` }),
        rawCdpClient(reachable(session)).then(
          (client) => client,
          (error: Error) => error,
        ),
      ]);
      const connectionWon = !(connected instanceof Error);
      expect(submitted.status === 202, `round ${round}`).toBe(!connectionWon);
      if (connectionWon) {
        expect(submitted.body.error.code).toBe('device_busy');
        connected.socket.close();
        await connected.closed;
      } else {
        expect(connected.message).toMatch(/409/);
        await waitForTaskEnd(api, submitted.body.id);
      }
      await devices.deleteAll();
    }
  });
});

describe('idle suspend', () => {
  it('spares a device while a CDP connection is open, and suspends it once the connection closed', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const client = await rawCdpClient(reachable(session));
    const longAfter = new Date(Date.now() + 7 * 24 * 3600 * 1000);
    expect(await suspendIdleDevices(test.service.services, longAfter)).toBe(0);
    client.socket.close();
    await waitFor(async () => (await slotHolder(device)) === null);
    expect(await suspendIdleDevices(test.service.services, longAfter)).toBe(1);
    expect((await api('GET', `/v1/devices/${device}`)).body.status).toBe('sleeping');
  });
});

describe('Playwright through cdp_url', () => {
  it('connectOverCDP works: a page, its title, a cookie the next task sees; browser.close() ends the connection and keeps the device', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const browser = await chromium.connectOverCDP(reachable(session));
    const context = browser.contexts()[0]!;
    const page = await context.newPage();
    await page.goto(pages.url('/page'));
    expect(await page.title()).toBe('CDP test page');
    await context.addCookies([{ name: 'from_playwright', value: 'yes', url: pages.url('/') }]);
    expect((await context.cookies(pages.url('/'))).map((cookie) => cookie.name)).toContain('from_playwright');
    expect((await api('POST', `/v1/devices/${device}/tasks`, { prompt: 'return the title' })).status).toBe(409);
    await browser.close();

    await waitFor(async () => (await slotHolder(device)) === null);
    const task = await runTask(device, `go to ${pages.url('/cookies')} then return the text of "#cookies"`);
    expect(task.status).toBe('succeeded');
    expect(JSON.stringify(task.result)).toContain('from_playwright=yes');
  });
});

describe('what a client may do', () => {
  it('refuses browser-wide and host-reaching methods and file:, chrome: and devtools: URLs; confines the rest to the device', async () => {
    const device = await devices.create(tenant.spaceId);
    const client = await rawCdpClient(reachable(await openCdp(device)));
    const refused = async (method: string, params: object = {}, sessionId?: string) => {
      const answer = await client.send(method, params, sessionId);
      expect(answer.error, method).toBeDefined();
      expect(answer.result, method).toBeUndefined();
    };
    await refused('Browser.crash');
    await refused('Browser.getBrowserCommandLine');
    await refused('SystemInfo.getInfo');
    await refused('Tracing.start');
    await refused('Target.createBrowserContext');
    await refused('Target.disposeBrowserContext', { browserContextId: 'x' });
    // Another browser session is the client's own, under the same rules.
    const { result: browserSession } = await client.send('Target.attachToBrowserTarget');
    await refused('Browser.crash', {}, browserSession.sessionId);
    await refused('Target.createBrowserContext', {}, browserSession.sessionId);
    await refused('Tracing.start', {}, browserSession.sessionId);
    expect((await client.send('Target.getBrowserContexts', {}, browserSession.sessionId)).result).toEqual({ browserContextIds: [] });
    await refused('Target.exposeDevToolsProtocol', { targetId: 'x' });
    await refused('Storage.getCookies', { browserContextId: 'another' });
    for (const url of ['file:///etc/passwd', 'chrome://version', 'devtools://devtools/bundled/inspector.html', 'view-source:http://127.0.0.1/', 'javascript:alert(1)']) {
      await refused('Target.createTarget', { url });
    }
    // A download path on the host is never set; the call is acknowledged and ignored.
    expect((await client.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp' })).result).toEqual({});

    const { result: created } = await client.send('Target.createTarget', { url: 'about:blank' });
    const { result: attached } = await client.send('Target.attachToTarget', { targetId: created.targetId, flatten: true });
    const pageSession = attached.sessionId as string;
    for (const url of ['file:///etc/passwd', 'chrome://settings', 'devtools://devtools/bundled/inspector.html']) {
      await refused('Page.navigate', { url }, pageSession);
    }
    await refused('DOM.setFileInputFiles', { files: ['/etc/passwd'], nodeId: 1 }, pageSession);
    await refused('Network.loadNetworkResource', { url: 'file:///etc/passwd', options: { disableCache: true, includeCredentials: false } }, pageSession);
    await refused('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp' }, pageSession);
    await refused('Target.createTarget', { url: 'about:blank' }, pageSession);
    await refused('Runtime.evaluate', { expression: '1' }, 'not-a-session-of-this-client');
    const evaluated = await client.send('Runtime.evaluate', { expression: '6 * 7', returnByValue: true }, pageSession);
    expect(evaluated.result.result.value).toBe(42);
    // The browser target and Chrome's own UI are not among the targets a client sees.
    const { result: listed } = await client.send('Target.getTargets');
    expect(listed.targetInfos.length).toBeGreaterThan(0);
    expect(listed.targetInfos.every((info: any) => ['tab', 'page'].includes(info.type) && !String(info.url).startsWith('chrome'))).toBe(true);
    expect((await client.send('Target.getBrowserContexts')).result).toEqual({ browserContextIds: [] });
    // Not a command at all: answered, and the connection stays.
    client.socket.send('not json');
    expect((await client.send('Browser.getVersion')).result.product).toMatch(/Chrome/);
    client.socket.close();
    await client.closed;
  });
  it('answers commands past 1,000 waiting at once with an error, and the rest normally', async () => {
    const device = await devices.create(tenant.spaceId);
    const client = await rawCdpClient(reachable(await openCdp(device)));
    const { result: created } = await client.send('Target.createTarget', { url: 'about:blank' });
    const { result: attached } = await client.send('Target.attachToTarget', { targetId: created.targetId, flatten: true });
    const slow = { expression: 'new Promise((resolve) => setTimeout(() => resolve(1), 1500))', awaitPromise: true, returnByValue: true };
    const answers = await Promise.all(Array.from({ length: 1_001 }, () => client.send('Runtime.evaluate', slow, attached.sessionId)));
    expect(answers.filter((answer) => answer.result?.result?.value === 1)).toHaveLength(1_000);
    expect(answers.filter((answer) => /commands are waiting/.test(answer.error?.message ?? ''))).toHaveLength(1);
    client.socket.close();
    await client.closed;
  });
});

describe('the end of a connection', () => {
  it('DELETE /v1/cdp_sessions/{id} closes the connection and frees the slot; a second DELETE is 410', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const client = await rawCdpClient(reachable(session));
    expect((await api('DELETE', `/v1/cdp_sessions/${session.id}`)).status).toBe(204);
    expect(await client.closed).toEqual({ code: 4001, reason: 'cdp_session_deleted' });
    expect(await slotHolder(device)).toBeNull();
    expect((await api('DELETE', `/v1/cdp_sessions/${session.id}`)).body.error.code).toBe('session_expired');
    const task = await runTask(device, `go to ${pages.url('/page')} then return the title`);
    expect(task.status).toBe('succeeded');
  });

  it('closes an unused cdp_url on DELETE too', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    expect((await api('DELETE', `/v1/cdp_sessions/${session.id}`)).status).toBe(204);
    await expect(rawCdpClient(reachable(session))).rejects.toThrow(/410/);
  });

  it('deleting the device closes the connection', async () => {
    const device = await devices.create(tenant.spaceId);
    const client = await rawCdpClient(reachable(await openCdp(device)));
    expect((await api('DELETE', `/v1/devices/${device}`)).status).toBe(202);
    expect((await client.closed).code).toBe(4004);
  });

  it('revoking the key that created it closes the connection', async () => {
    const revocable = await tenant.key(allScopes);
    const device = await devices.create(tenant.spaceId);
    const client = await rawCdpClient(reachable(await openCdp(device, apiClient(test.url, revocable))));
    const keyId = revocable.split('_')[3]!;
    await revokeApiKey(test.service.services.db, keyId, { publicUrl: PUBLIC_URL });
    expect(await client.closed).toEqual({ code: 4003, reason: 'key_revoked' });
    await waitFor(async () => (await slotHolder(device)) === null);
  });

  it('expiry closes the connection', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const client = await rawCdpClient(reachable(session));
    await test.service.services.db.update(cdpSessions).set({ expiresAt: sql`now()` }).where(eq(cdpSessions.id, parsePublicId('cdpSession', session.id)!));
    expect(await client.closed).toEqual({ code: 4002, reason: 'cdp_session_expired' });
    await waitFor(async () => (await slotHolder(device)) === null);
    const [row] = await test.service.services.db.select().from(cdpSessions).where(eq(cdpSessions.id, parsePublicId('cdpSession', session.id)!));
    expect(row?.closeReason).toBe('expired');
  });

  it('is metered as session_duration, from creation until closed', async () => {
    const metered = await createTenant(test);
    const meteredApi = apiClient(test.url, await metered.key(allScopes));
    const created = await meteredApi('POST', '/v1/devices', { space_id: metered.spaceId });
    const session = await openCdp(created.body.id, meteredApi);
    const client = await rawCdpClient(reachable(session));
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await meteredApi('DELETE', `/v1/cdp_sessions/${session.id}`)).status).toBe(204);
    await client.closed;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const usage = await meteredApi('GET', '/v1/usage');
    const seconds = usage.body.data.find((row: any) => row.kind === 'session_duration').quantity;
    // Closed after about 2 s: counted to the close, not to expires_at (900 s).
    expect(seconds).toBeGreaterThanOrEqual(2);
    expect(seconds).toBeLessThan(10);
    await meteredApi('DELETE', `/v1/devices/${created.body.id}`);
  });
});

describe('across instances', () => {
  it('a cdp_url reached through another instance is relayed to the one running the device', async () => {
    const other = await startAnotherInstance(test);
    try {
      const device = await devices.create(tenant.spaceId);
      const session = await openCdp(device);
      const browser = await puppeteer.connect({ browserWSEndpoint: reachable(session, other.url), defaultViewport: null });
      const page = await browser.newPage();
      await page.goto(pages.url('/page'));
      expect(await page.title()).toBe('CDP test page');
      const submitted = await apiClient(other.url, key)('POST', `/v1/devices/${device}/tasks`, { prompt: 'return the title' });
      expect(submitted.body.error.code).toBe('device_busy');
      const closed = new Promise<void>((resolve) => browser.once('disconnected', () => resolve()));
      expect((await apiClient(other.url, key)('DELETE', `/v1/cdp_sessions/${session.id}`)).status).toBe(204);
      await closed;
      await waitFor(async () => (await slotHolder(device)) === null);
    } finally {
      await other.close();
    }
  });

  it('a client relayed through an instance that stops is told to reconnect, and its session waits for it; so is one whose device is handed over', async () => {
    const other = await startAnotherInstance(test);
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const id = parsePublicId('cdpSession', session.id)!;
    try {
      const relayed = await rawCdpClient(reachable(session, other.url));
      expect((await relayed.send('Browser.getVersion')).result.product).toMatch(/Chrome/);
      await other.close();
      expect(await relayed.closed).toEqual({ code: 1012, reason: 'service_restart' });
      await waitFor(async () => (await cdpRow(id))?.connectionHostId === null);
      expect(await slotHolder(device)).toBe(id);

      const direct = await rawCdpClient(reachable(session));
      expect((await direct.send('Browser.getVersion')).result.product).toMatch(/Chrome/);
      test.service.closeForDevice(parsePublicId('device', device)!, 'service_restart');
      expect(await direct.closed).toEqual({ code: 1012, reason: 'service_restart' });
      const again = await rawCdpClient(reachable(session));
      expect((await again.send('Browser.getVersion')).result.product).toMatch(/Chrome/);
      again.socket.close();
      await waitFor(async () => (await slotHolder(device)) === null);
      expect((await cdpRow(id))?.connectionHostId).toBeNull();
      expect((await cdpRow(id))?.closedAt).toBeNull();
    } finally {
      await other.close();
    }
  });

  it('a stop closes its connections with 1012 and keeps them, slot held, for their clients to reconnect with the same cdp_url; a restart closes what a crashed run left open', async () => {
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const client = await rawCdpClient(reachable(session));
    const id = parsePublicId('cdpSession', session.id)!;
    await test.restart();
    expect(await client.closed).toEqual({ code: 1012, reason: 'service_restart' });
    expect(await cdpRow(id)).toMatchObject({ closedAt: null, connectionHostId: null });
    expect(await slotHolder(device)).toBe(id);
    const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: 'return the title' });
    expect(submitted.body.error.code).toBe('device_busy');

    // The same URL connects again, once at a time.
    const browser = await puppeteer.connect({ browserWSEndpoint: reachable(session), defaultViewport: null });
    const page = await browser.newPage();
    await page.goto(pages.url('/page'));
    expect(await page.title()).toBe('CDP test page');
    await expect(rawCdpClient(reachable(session))).rejects.toThrow(/410/);
    expect(await slotHolder(device)).toBe(id);
    const audited = await test.service.services.db.select({ details: auditEvents.details }).from(auditEvents).where(eq(auditEvents.action, 'operator.cdp_session.connected'));
    expect(audited.map((event) => (event.details as { reconnected?: boolean }).reconnected).filter((reconnected) => reconnected === true).length).toBeGreaterThan(0);

    // As a process killed outright leaves it: the connection open in the database, held by this host.
    const hostId = test.service.services.hostId;
    await browser.disconnect();
    await waitFor(async () => (await slotHolder(device)) === null);
    await test.service.services.db.update(cdpSessions).set({ connectionHostId: hostId }).where(eq(cdpSessions.id, id));
    await test.service.services.db.update(deviceTable).set({ cdpSessionId: id }).where(eq(deviceTable.id, parsePublicId('device', device)!));
    await test.restart();
    expect((await cdpRow(id))?.closeReason).toBe('host_lost');
    expect(await slotHolder(device)).toBeNull();
  });

  it('a connection waiting for its client ends when its session expires or is deleted, freeing the slot', async () => {
    const [first, second] = [await devices.create(tenant.spaceId), await devices.create(tenant.spaceId)];
    const expiring = await openCdp(first);
    const deleted = await openCdp(second);
    for (const [device, session] of [[first, expiring], [second, deleted]] as const) {
      const client = await rawCdpClient(reachable(session));
      test.service.closeForDevice(parsePublicId('device', device)!, 'service_restart');
      expect((await client.closed).code).toBe(1012);
    }
    const expiringId = parsePublicId('cdpSession', expiring.id)!;
    await waitFor(async () => (await cdpRow(expiringId))?.connectionHostId === null);
    await test.service.services.db.update(cdpSessions).set({ expiresAt: new Date(Date.now() - 1_000) }).where(eq(cdpSessions.id, expiringId));
    // Sessions other tests left waiting may end with it.
    expect(await endUnresumableCdpConnections(test.service.services.db)).toBeGreaterThanOrEqual(1);
    expect((await cdpRow(expiringId))?.closeReason).toBe('expired');
    expect(await slotHolder(first)).toBeNull();

    expect((await api('DELETE', `/v1/cdp_sessions/${deleted.id}`)).status).toBe(204);
    expect(await slotHolder(second)).toBeNull();
    await expect(rawCdpClient(reachable(deleted))).rejects.toThrow(/410/);
  });
});

async function fetchBytes(route: string, headers: Record<string, string> = {}, bearer = key) {
  const response = await fetch(`${test.url}${route}`, { headers: { Authorization: `Bearer ${bearer}`, ...headers } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/**
 * The session's recording once stored, or its last 404 after `withinMs`: encoding and
 * storing run in the background (niceness 10), behind the other test files' browsers.
 */
async function storedRecording(cdpSessionId: string, withinMs: number) {
  const deadline = Date.now() + withinMs;
  let video = await fetchBytes(`/v1/cdp_sessions/${cdpSessionId}/recording`);
  while (video.status === 404 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    video = await fetchBytes(`/v1/cdp_sessions/${cdpSessionId}/recording`);
  }
  return video;
}

describe('recordings of CDP sessions', () => {
  it("records the pages a client opens from the connection's opening to its end, served at GET /v1/cdp_sessions/{id}/recording with Range; 404 before and to other organizations", async () => {
    // A tenant of its own: the suite's tenant helper holds the database of the first start.
    const mine = await createTenant(test);
    const mineKey = await mine.key(allScopes);
    const mineApi = apiClient(test.url, mineKey);
    const device = (await mineApi('POST', '/v1/devices', { space_id: mine.spaceId })).body.id as string;
    const session = await openCdp(device, mineApi);
    const route = `/v1/cdp_sessions/${session.id}/recording`;
    const unused = await mineApi('GET', route);
    expect(unused.status).toBe(404);
    expect(unused.body.error.code).toBe('recording_not_found');

    const browser = await puppeteer.connect({ browserWSEndpoint: reachable(session), defaultViewport: null });
    // Pages of its own, as scripts open them: the recording follows the page opened last.
    const red = await browser.newPage();
    await red.goto(colourPages.url('/red'));
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const blue = await browser.newPage();
    await blue.goto(colourPages.url('/blue'));
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    // The shown page closes: back to the newest one left.
    await blue.close();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    // While the connection is open the video is still being written.
    const during = await mineApi('GET', route);
    expect(during.status).toBe(404);
    expect(during.body.error.code).toBe('recording_not_found');
    await browser.disconnect();

    const deadline = Date.now() + 20_000;
    let whole = await fetchBytes(route, {}, mineKey);
    while (whole.status === 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      whole = await fetchBytes(route, {}, mineKey);
    }
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    const video = await ffprobe(whole.bytes);
    expect(video.codec).toBe('h264');
    expect(video.duration).toBeGreaterThan(1.5);
    expect(video.width).toBeGreaterThan(300);
    expect(video.height).toBeGreaterThan(200);
    const colours = await frameColors(whole.bytes);
    const firstRed = colours.findIndex(isRed);
    expect(firstRed).toBeGreaterThanOrEqual(0);
    const firstBlue = colours.findIndex(isBlue);
    expect(firstBlue).toBeGreaterThan(firstRed);
    expect(colours.slice(firstBlue).findIndex(isRed)).toBeGreaterThan(0);
    expect(isRed(colours.at(-1)!)).toBe(true);

    const part = await fetchBytes(route, { Range: 'bytes=0-99' }, mineKey);
    expect(part.status).toBe(206);
    expect(part.bytes.equals(whole.bytes.subarray(0, 100))).toBe(true);

    const other = await createTenant(test);
    const foreign = await apiClient(test.url, await other.key(allScopes))('GET', route);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('cdp_session_not_found');
    expect((await apiClient(test.url, await mine.key(['operator:tasks:read']))('GET', route)).status).toBe(403);
    expect((await apiClient(test.url)('GET', route)).status).toBe(401);
    expect((await mineApi('DELETE', `/v1/devices/${device}`)).status).toBe(202);
  });

  it('stores the recording when the connection ends by DELETE, by deleting the device, and at a graceful stop', async () => {
    const deleted = await openCdp(await devices.create(tenant.spaceId));
    const deletedClient = await rawCdpClient(reachable(deleted));
    await recordedAWhile();
    expect((await api('DELETE', `/v1/cdp_sessions/${deleted.id}`)).status).toBe(204);
    await deletedClient.closed;

    const deviceGone = await devices.create(tenant.spaceId);
    const goneSession = await openCdp(deviceGone);
    const goneClient = await rawCdpClient(reachable(goneSession));
    await recordedAWhile();
    expect((await api('DELETE', `/v1/devices/${deviceGone}`)).status).toBe(202);
    await goneClient.closed;

    const stopped = await openCdp(await devices.create(tenant.spaceId));
    const stoppedClient = await rawCdpClient(reachable(stopped));
    await recordedAWhile();
    await test.restart();
    await stoppedClient.closed;

    for (const ended of [deleted, goneSession, stopped]) {
      const video = await storedRecording(ended.id, 40_000);
      expect(video.status, ended.id).toBe(200);
      expect((await ffprobe(video.bytes)).duration).toBeGreaterThan(0);
    }
  });

  it('stores the recording of a connection whose device is deleted the moment it opened, before its page sent a frame', async () => {
    // The browser is killed only once the recording has a frame (its view's picture of the
    // still page): without that wait the recording kept nothing and was marked failed.
    const device = await devices.create(tenant.spaceId);
    const session = await openCdp(device);
    const client = await rawCdpClient(reachable(session));
    expect((await api('DELETE', `/v1/devices/${device}`)).status).toBe(202);
    await client.closed;
    const video = await storedRecording(session.id, 120_000);
    expect(video.status).toBe(200);
    expect((await ffprobe(video.bytes)).duration).toBeGreaterThan(0);
  }, 180_000);
});
