import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { chromium, type CDPSession as PlaywrightCdpSession } from '@playwright/test';
import { eq } from 'drizzle-orm';
import puppeteer24 from 'puppeteer-core';
import puppeteer25 from 'puppeteer-core-25';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { auditEvents, cdpSessions } from '../../db/schema';
import { parsePublicId } from '../../server/domain/ids';
import { DeviceTracker } from '../support/device-tracker';
import { freePort } from '../support/free-port';
import { apiClient, type ApiCall } from '../support/http';
import { allScopes, createTenant, startTestService, type TestService } from '../support/test-service';

// The DevTools clients people already use, unchanged, against a device's cdp_url (docs/api.md,
// "Client compatibility"): Puppeteer 24 and 25, Playwright, chrome-devtools-mcp and
// Playwright MCP (their real packages, the MCP servers spawned as their users spawn them,
// driven by an MCP client). One device serves the whole file; every test deletes its CDP
// session, which frees the device for the next.

const ROOT = path.resolve(import.meta.dirname, '../..');
const PAGE_TITLE = 'Compatibility page';
const PAGE_TEXT = 'Hello from the compatibility page';

let test: TestService;
let api: ApiCall;
let device: string;
let pageServer: http.Server;
let pageUrl: string;
let devices: DeviceTracker;

interface CdpSession {
  id: string;
  cdp_url: string;
}

/** A port free now, so the service's OPERATOR_PUBLIC_URL (and so its cdp_url) is where the test reaches it. */
beforeAll(async () => {
  pageServer = http.createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(`<!doctype html><title>${PAGE_TITLE}</title><h1>${PAGE_TEXT}</h1><button>Press</button>`);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/page`;
  const port = await freePort();
  test = await startTestService({ PORT: String(port), OPERATOR_PUBLIC_URL: `http://127.0.0.1:${port}` });
  const tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(allScopes));
  devices = new DeviceTracker(() => api);
  device = await devices.create(tenant.spaceId);
});
afterAll(async () => {
  await devices?.deleteAll();
  await test?.stop();
  pageServer?.closeAllConnections();
  await new Promise((resolve) => pageServer?.close(resolve));
});

async function openCdp(): Promise<CdpSession> {
  const created = await api('POST', `/v1/devices/${device}/cdp`, {});
  expect(created.status).toBe(201);
  return created.body;
}

/** Deleting the session frees the device for the next test. */
async function deleteCdp(session: CdpSession): Promise<void> {
  expect((await api('DELETE', `/v1/cdp_sessions/${session.id}`)).status).toBe(204);
}

/** The http form of cdp_url, for clients that start from `browserURL` / `--browserUrl`. */
function httpForm(session: CdpSession): string {
  return session.cdp_url.replace(/^ws/, 'http');
}

function secretOf(session: CdpSession): string {
  return new URL(session.cdp_url).searchParams.get('token')!;
}

async function expectTaskRefusedBusy(): Promise<void> {
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: 'return the title' });
  expect(submitted.status).toBe(409);
  expect(submitted.body.error.code).toBe('device_busy');
}

/** The trace a Tracing.start … Tracing.end on `send`'s session wrote, read from its stream with IO.read. */
async function readTrace(send: (method: string, params?: object) => Promise<any>, complete: Promise<{ stream?: string }>): Promise<string> {
  await send('Tracing.end');
  const { stream } = await complete;
  expect(stream).toBeDefined();
  let text = '';
  for (;;) {
    const chunk = await send('IO.read', { handle: stream });
    text += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString() : chunk.data;
    if (chunk.eof) break;
  }
  await send('IO.close', { handle: stream });
  return text;
}

describe.each([
  ['Puppeteer 24', puppeteer24],
  ['Puppeteer 25', puppeteer25 as unknown as typeof puppeteer24],
])('%s', (_name, puppeteer) => {
  it('sees the existing page, asks Browser.getVersion on a page session, traces the page, and reconnects with the same cdp_url until it is deleted', async () => {
    const session = await openCdp();
    try {
      let browser = await puppeteer.connect({ browserWSEndpoint: session.cdp_url, defaultViewport: null });
      const existing = await browser.pages();
      expect(existing.length).toBeGreaterThan(0);
      const page = existing[0]!;
      await page.goto(pageUrl);
      expect(await page.title()).toBe(PAGE_TITLE);

      const pageSession = await page.createCDPSession();
      const version = (await pageSession.send('Browser.getVersion')) as { product: string; protocolVersion: string };
      expect(version.product).toMatch(/Chrom/);
      await pageSession.detach();

      await page.tracing.start();
      await page.reload();
      const trace = (await page.tracing.stop())!;
      const events = JSON.parse(Buffer.from(trace).toString()).traceEvents as { name: string; args?: unknown }[];
      expect(events.some((event) => JSON.stringify(event.args ?? {}).includes(pageUrl))).toBe(true);

      // While connected the device's slot is held: a task waits.
      await expectTaskRefusedBusy();
      await browser.disconnect();

      browser = await puppeteer.connect({ browserWSEndpoint: session.cdp_url, defaultViewport: null });
      expect((await browser.pages()).map((each) => each.url())).toContain(pageUrl);
      // The secret opens one connection at a time.
      await expect(puppeteer.connect({ browserWSEndpoint: session.cdp_url })).rejects.toThrow(/410/);
      // Browser.close ends the connection, not the session (nor the device's browser).
      await browser.close();

      browser = await puppeteer.connect({ browserWSEndpoint: session.cdp_url, defaultViewport: null });
      expect((await browser.pages()).map((each) => each.url())).toContain(pageUrl);
      await browser.disconnect();
    } finally {
      await deleteCdp(session);
    }
    await expect(puppeteer.connect({ browserWSEndpoint: session.cdp_url })).rejects.toThrow(/410/);
  });
});

describe('Playwright', () => {
  it('sees the existing page, asks Browser.getVersion on a page session, traces the page reading the stream, and reconnects after browser.close() until the session is deleted', async () => {
    const session = await openCdp();
    try {
      let browser = await chromium.connectOverCDP(session.cdp_url);
      const existing = browser.contexts()[0]!.pages();
      expect(existing.length).toBeGreaterThan(0);
      const page = existing[0]!;
      await page.goto(pageUrl);

      const cdp: PlaywrightCdpSession = await browser.contexts()[0]!.newCDPSession(page);
      const send = (method: string, params?: object) => cdp.send(method as never, params as never) as Promise<any>;
      expect((await send('Browser.getVersion')).product).toMatch(/Chrom/);
      // Never the host's system tracing, which records every process of the machine.
      await expect(send('Tracing.start', { tracingBackend: 'system' })).rejects.toThrow(/tracing backend/);
      await send('Tracing.start', { transferMode: 'ReturnAsStream', traceConfig: { includedCategories: ['devtools.timeline', 'blink.user_timing', 'loading'] } });
      await page.reload();
      const complete = new Promise<{ stream?: string }>((resolve) => cdp.once('Tracing.tracingComplete' as never, resolve as never));
      const trace = await readTrace(send, complete);
      expect(trace).toContain(pageUrl);
      await cdp.detach();

      await browser.close();
      browser = await chromium.connectOverCDP(session.cdp_url);
      expect(browser.contexts()[0]!.pages().map((each) => each.url())).toContain(pageUrl);
      await browser.close();
    } finally {
      await deleteCdp(session);
    }
    await expect(chromium.connectOverCDP(session.cdp_url)).rejects.toThrow(/410/);
  });
});

/** What a refused WebSocket handshake answered: status, headers and body. */
async function refusedHandshake(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => reject(new Error('the handshake was accepted')));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: `${JSON.stringify(response.headers)}\n${body}` }));
    });
  });
}

describe('the DevTools HTTP endpoint and refusals', () => {
  it('answers /json/version on the http form of cdp_url with the socket, which Puppeteer 25 takes as browserURL; no refusal, over HTTP or at the handshake, repeats the secret', async () => {
    const session = await openCdp();
    const secret = secretOf(session);
    const versionUrl = (form: string) => {
      const url = new URL(form);
      url.pathname += '/json/version';
      return url.toString();
    };
    try {
      const answer = await fetch(versionUrl(httpForm(session)));
      expect(answer.status).toBe(200);
      expect((await answer.json()).webSocketDebuggerUrl).toBe(session.cdp_url);

      const browser = await puppeteer25.connect({ browserURL: httpForm(session), defaultViewport: null });
      expect((await browser.pages()).length).toBeGreaterThan(0);
      await browser.disconnect();

      // The http form itself is no page: a plain 404 that does not repeat the URL.
      const plain = await fetch(httpForm(session));
      expect(plain.status).toBe(404);
      expect(await plain.text()).not.toContain(secret);

      // A wrong secret: 401 over HTTP and at the handshake, naming neither secret.
      const wrong = `cdptok_${'A'.repeat(43)}`;
      const wrongHttp = await fetch(versionUrl(httpForm(session).replace(secret, wrong)));
      expect(wrongHttp.status).toBe(401);
      const wrongText = `${JSON.stringify([...wrongHttp.headers])}\n${await wrongHttp.text()}`;
      const wrongSocket = await refusedHandshake(session.cdp_url.replace(secret, wrong));
      expect(wrongSocket.status).toBe(401);
      for (const text of [wrongText, wrongSocket.text]) {
        expect(text).toContain('invalid_session_token');
        expect(text).not.toContain(wrong);
        expect(text).not.toContain(secret);
      }
    } finally {
      await deleteCdp(session);
    }
    // Deleted, and another one expired: 410 at both doors, without the secret.
    const expired = await openCdp();
    await test.service.services.db.update(cdpSessions).set({ expiresAt: new Date(Date.now() - 1_000) }).where(eq(cdpSessions.id, parsePublicId('cdpSession', expired.id)!));
    for (const ended of [session, expired]) {
      const overHttp = await fetch(versionUrl(httpForm(ended)));
      expect(overHttp.status).toBe(410);
      const socket = await refusedHandshake(ended.cdp_url);
      expect(socket.status).toBe(410);
      for (const text of [`${JSON.stringify([...overHttp.headers])}\n${await overHttp.text()}`, socket.text]) {
        expect(text).toContain('session_expired');
        expect(text).not.toContain(secretOf(ended));
      }
    }
  });
});

/** An MCP server package spawned as its users spawn it (its bin, on the pinned Node), offline. */
async function mcpClient(bin: string, args: string[]): Promise<{ client: Client; stderr: () => string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(ROOT, bin), ...args],
    cwd: ROOT,
    // chrome-devtools-mcp: no usage statistics, no npm update check (CI turns both off too).
    env: { ...env, CI: '1', CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1', CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'cdp-clients-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}, stderr: () => string = () => ''): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 45_000 })) as CallToolResult;
  expect(result.isError, `${name}: ${JSON.stringify(result.content).slice(0, 2_000)}\n${stderr()}`).toBeFalsy();
  return result;
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

function expectImage(result: CallToolResult): void {
  const image = result.content.find((part) => part.type === 'image');
  if (image?.type !== 'image') throw new Error(`expected an image: ${JSON.stringify(result.content).slice(0, 500)}`);
  expect(Buffer.from(image.data, 'base64').length).toBeGreaterThan(100);
}

describe('chrome-devtools-mcp', () => {
  it.each([
    ['--browserUrl (the http form)', (session: CdpSession) => ['--browserUrl', httpForm(session)], false],
    ['--wsEndpoint', (session: CdpSession) => ['--wsEndpoint', session.cdp_url], true],
  ])('through %s lists pages, navigates, snapshots, screenshots and records a performance trace (and, once, a Lighthouse audit)', async (_name, endpoint, withLighthouse) => {
    const session = await openCdp();
    const { client, stderr } = await mcpClient('node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js', [...endpoint(session), '--no-usage-statistics', '--no-performance-crux']);
    try {
      // The device's existing page is listed, with the id page tools take.
      const listed = /(\d+): /.exec(textOf(await call(client, 'list_pages', {}, stderr)));
      expect(listed).not.toBeNull();
      const pageId = Number(listed![1]);
      await call(client, 'navigate_page', { pageId, type: 'url', url: pageUrl }, stderr);
      expect(textOf(await call(client, 'list_pages', {}, stderr))).toContain(pageUrl);
      expect(textOf(await call(client, 'take_snapshot', { pageId }, stderr))).toContain(PAGE_TEXT);
      expectImage(await call(client, 'take_screenshot', { pageId }, stderr));
      await call(client, 'performance_start_trace', { pageId, reload: true, autoStop: false }, stderr);
      expect(textOf(await call(client, 'performance_stop_trace', { pageId }, stderr))).toContain(pageUrl);
      if (withLighthouse) {
        // Lighthouse itself, as the tool runs it on the page: Browser.getVersion on the page's session and the rest.
        const reports = await mkdtemp(path.join(tmpdir(), 'lighthouse-'));
        try {
          const audit = textOf(await call(client, 'lighthouse_audit', { pageId, mode: 'navigation', outputDirPath: reports }, stderr));
          expect(audit).toContain(`URL: ${pageUrl}`);
          expect(audit).toMatch(/Accessibility: \d+/);
        } finally {
          await rm(reports, { recursive: true, force: true });
        }
      }
    } finally {
      await client.close();
      await deleteCdp(session);
    }
  });
});

describe('Playwright MCP', () => {
  it('through --cdp-endpoint lists tabs, navigates, snapshots and screenshots; after browser_close the next call connects again', async () => {
    const session = await openCdp();
    const outputDir = await mkdtemp(path.join(tmpdir(), 'playwright-mcp-'));
    const { client, stderr } = await mcpClient('node_modules/@playwright/mcp/cli.js', ['--cdp-endpoint', session.cdp_url, '--output-dir', outputDir]);
    try {
      await call(client, 'browser_tabs', { action: 'list' }, stderr);
      await call(client, 'browser_navigate', { url: pageUrl }, stderr);
      expect(textOf(await call(client, 'browser_snapshot', {}, stderr))).toContain(PAGE_TEXT);
      expectImage(await call(client, 'browser_take_screenshot', {}, stderr));
      await call(client, 'browser_close', {}, stderr);
      // The next call connects again with the same cdp_url: a second connection, audited as one.
      expect(textOf(await call(client, 'browser_tabs', { action: 'list' }, stderr))).toContain(pageUrl);
      expect(textOf(await call(client, 'browser_snapshot', {}, stderr))).toContain(PAGE_TEXT);
      const audited = await test.service.services.db.select().from(auditEvents).where(eq(auditEvents.resourceId, session.id)).orderBy(auditEvents.createdAt);
      const connections = audited.filter((event) => event.action === 'operator.cdp_session.connected').map((event) => (event.details as { reconnected: boolean }).reconnected);
      expect(connections).toEqual([false, true]);
      expect(audited.filter((event) => event.action === 'operator.cdp_session.disconnected')).toHaveLength(1);
    } finally {
      await client.close();
      await deleteCdp(session);
      await rm(outputDir, { recursive: true, force: true });
    }
  });
});
