import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, startRemoteChromium } from '../support/browser-fixtures';
import { startBrowserlessServer } from '../support/browserless-server';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The device egress policy as an attacker with an ordinary key meets it: real Chromium,
// real PostgreSQL, the default configuration. A "private" server on loopback stands for
// everything a device must never reach (metadata, admin pages, the service's own ports)
// and counts every connection and request that lands on it. One page server, opened by
// the test-only rule, is the "public" site whose page tries every way back in.

const blockedDetail = "The task tried to open a destination the device's egress policy blocks.";

interface CountingServer {
  server: Server;
  port: number;
  hits: string[];
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

/** The private target: answers anything, and records every request, upgrade and raw connection. */
async function startPrivateServer(): Promise<CountingServer> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'Content-Type': 'text/html', 'Access-Control-Allow-Origin': '*' }).end('<title>Private</title><p id="secret">root:x:0:0</p>');
  });
  server.on('connection', () => hits.push('connection'));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    hits.push(`upgrade ${req.url}`);
    socket.destroy();
  });
  return { server, port: await listen(server), hits };
}

/** The allowed site: an attack page, a redirect into the private server, and a link to it. */
async function startAttackSite(privatePort: number): Promise<{ server: Server; port: number }> {
  const target = `127.0.0.1:${privatePort}`;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/attack') {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html><title>Attack</title>
        <iframe src="http://${target}/iframe"></iframe>
        <img src="http://${target}/img">
        <link rel="prefetch" href="http://${target}/prefetch">
        <p id="status">working</p>
        <script>
          const attempts = [
            fetch('http://${target}/fetch').catch(() => 'refused'),
            fetch('http://localhost:${privatePort}/fetch-by-name').catch(() => 'refused'),
            new Promise((done) => { const x = new XMLHttpRequest(); x.onloadend = done; x.open('GET', 'http://${target}/xhr'); x.send(); }),
            new Promise((done) => { const ws = new WebSocket('ws://${target}/ws'); ws.onerror = ws.onopen = done; }),
            new Promise((done) => { const es = new EventSource('http://${target}/events'); es.onerror = () => { es.close(); done(); }; }),
            navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then(() => new Promise((done) => setTimeout(done, 1500))).catch(() => 'no worker'),
          ];
          Promise.allSettled(attempts).then(() => { document.getElementById('status').textContent = 'attempts done'; });
        </script>`);
    } else if (path === '/sw.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(`
        self.addEventListener('install', (event) => event.waitUntil(fetch('http://${target}/from-worker').catch(() => null)));
        self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));`);
    } else if (path === '/redirect') {
      res.writeHead(302, { Location: `http://${target}/redirected` }).end();
    } else if (path === '/link') {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html><title>Links</title><a href="http://${target}/clicked">private link</a>`);
    } else if (path === '/late-link') {
      // A navigation that starts well after the click, as a click's does on a loaded host.
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html><title>Late link</title>
        <button onclick="setTimeout(() => { location.href = 'http://${target}/late'; }, 1000)">late private link</button>`);
    } else {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>Public</title><p>public page</p>');
    }
  });
  return { server, port: await listen(server) };
}

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let privateServer: CountingServer;
let site: { server: Server; port: number };
const devices = new DeviceTracker(() => api);

beforeAll(async () => {
  privateServer = await startPrivateServer();
  site = await startAttackSite(privateServer.port);
  test = await startTestService({
    OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'false',
    OPERATOR_TEST_ALLOW_DESTINATIONS: `127.0.0.1:${site.port}`,
  });
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:devices:write', 'operator:tasks:write', 'operator:tasks:read']));
});
afterEach(async () => {
  await devices.deleteAll();
});
afterAll(async () => {
  await test?.stop();
  await Promise.all([privateServer, site].map(({ server }) => new Promise((resolve) => server.close(resolve))));
});

async function runTask(prompt: string): Promise<any> {
  const device = await devices.create(tenant.spaceId);
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt });
  expect(submitted.status).toBe(202);
  return waitForTaskEnd(api, submitted.body.id);
}

describe('device egress policy (default configuration)', () => {
  it.each([
    ['a loopback page', () => `http://127.0.0.1:${privateServer.port}/admin`],
    ['a hostname that resolves to 127.0.0.1', () => `http://localhost:${privateServer.port}/admin`],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ["the service's own port", () => `${test.url}/v1/whoami`],
    ['a redirect from an allowed page', () => `http://127.0.0.1:${site.port}/redirect`],
  ])('fails a task aimed at %s with destination_blocked', async (_name, target) => {
    const task = await runTask(`go to ${target()} then return the text of "body"`);
    expect(task.status).toBe('failed');
    expect(task.result).toEqual({ error: 'destination_blocked', detail: blockedDetail });
    expect(privateServer.hits).toEqual([]);
  });

  it('fails a task whose click navigates to a private address', async () => {
    const task = await runTask(`go to http://127.0.0.1:${site.port}/link then click "private link" then return the title`);
    expect(task.result).toEqual({ error: 'destination_blocked', detail: blockedDetail });
    expect(privateServer.hits).toEqual([]);
  });

  it('fails a task whose page navigates to a private address after the click stopped waiting for it, at the next step', async () => {
    const task = await runTask(`go to http://127.0.0.1:${site.port}/late-link then click "late private link" then wait for "never shown"`);
    expect(task.result).toEqual({ error: 'destination_blocked', detail: blockedDetail });
    // The wait ends as the page goes, not at its own 15 s timeout.
    expect(Date.now() - Date.parse(task.created_at)).toBeLessThan(12_000);
    expect(privateServer.hits).toEqual([]);
  });

  it('lets an allowed page load while its iframe, image, prefetch, fetch, XHR, WebSocket, EventSource and service worker reach nothing private', async () => {
    const task = await runTask(`go to http://127.0.0.1:${site.port}/attack then wait for "attempts done" then return the title`);
    expect(task.status).toBe('succeeded');
    expect(task.result).toBe('Attack');
    // Anything still in flight (the worker's install, the prefetch) has had time to land.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(privateServer.hits).toEqual([]);
  });

  it('opens allowed destinations as before', async () => {
    const task = await runTask(`go to http://127.0.0.1:${site.port}/ then return the title`);
    expect(task).toMatchObject({ status: 'succeeded', result: 'Public' });
  });
});

/**
 * The policy on a service whose devices live on a browserless endpoint (`BROWSERLESS_URL`):
 * a private page is `destination_blocked`, the attack page loads and reaches nothing private.
 */
async function expectEgressHeldThrough(browserlessUrl: string): Promise<void> {
  const remoteService = await startTestService({
    OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'false',
    OPERATOR_TEST_ALLOW_DESTINATIONS: `127.0.0.1:${site.port}`,
    OPERATOR_BROWSER: 'browserless',
    BROWSERLESS_URL: browserlessUrl,
  });
  try {
    const remoteTenant = await createTenant(remoteService);
    const remoteApi = apiClient(remoteService.url, await remoteTenant.key(['operator:devices:write', 'operator:tasks:write', 'operator:tasks:read']));
    const device = await remoteApi('POST', '/v1/devices', { space_id: remoteTenant.spaceId });
    expect(device.status).toBe(201);
    const run = async (prompt: string) => {
      const submitted = await remoteApi('POST', `/v1/devices/${device.body.id}/tasks`, { prompt });
      return waitForTaskEnd(remoteApi, submitted.body.id);
    };
    expect((await run(`go to http://127.0.0.1:${privateServer.port}/ then return the title`)).result).toEqual({ error: 'destination_blocked', detail: blockedDetail });
    expect(await run(`go to http://127.0.0.1:${site.port}/attack then wait for "attempts done" then return the title`)).toMatchObject({ status: 'succeeded', result: 'Attack' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(privateServer.hits).toEqual([]);
    await remoteApi('DELETE', `/v1/devices/${device.body.id}`);
  } finally {
    await remoteService.stop();
  }
}

describe('device egress policy on a browserless endpoint of this machine', () => {
  it('holds for devices in contexts of a shared remote browser', async () => {
    const profile = await makeTempDir('operator-egress-remote-');
    const remote = await startRemoteChromium(profile.dir);
    try {
      await expectEgressHeldThrough(remote.webSocketUrl);
    } finally {
      await remote.stop();
      await profile.remove();
    }
  });

  it('holds for a device of a real browserless server, which launches a browser of its own per device', async () => {
    const browserless = await startBrowserlessServer({ concurrent: 1 });
    try {
      await expectEgressHeldThrough(browserless.url);
    } finally {
      await browserless.stop();
    }
  });
});
