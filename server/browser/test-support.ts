// Fixtures for the browser tests: a page server on 127.0.0.1 and a Chromium started by
// hand for the browserless provider. Not imported by production code.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export interface PageServer {
  port: number;
  /** "localhost:<port>" and "127.0.0.1:<port>" are different hosts to the allow-list. */
  url(pathname: string, host?: 'localhost' | '127.0.0.1'): string;
  /** Every request seen, as "<host header> <path>". */
  requests: string[];
  close(): Promise<void>;
}

interface RouteResponse {
  status?: number;
  body: string;
  headers?: Record<string, string>;
}

type Route = (request: http.IncomingMessage, port: number) => RouteResponse;

const PAGES: Record<string, Route> = {
  '/form': () => ({
    body: `<!doctype html><title>Form page</title>
      <h1>Sign up</h1>
      <a href="/next">Next page</a>
      <button id="greet" onclick="document.getElementById('out').textContent='Hello clicked'">Say hello</button>
      <button class="secondary" onclick="document.getElementById('out').textContent='Other clicked'">Another button</button>
      <label for="email">Email address</label><input id="email" name="email" type="email">
      <label>Full name <input name="fullname"></label>
      <input name="city" placeholder="Your city">
      <input name="zip" aria-label="Postal code">
      <input type="password" name="secret" value="hunter2">
      <select name="country" aria-label="Country"><option value="">Choose</option><option value="ca">Canada</option><option value="fr">France</option></select>
      <div id="clickable-div" onclick="document.getElementById('out').textContent='Div clicked'">Plain div action</div>
      <p id="out">nothing yet</p>
      <p id="late"></p>
      <script>setTimeout(() => { document.getElementById('late').textContent = 'Arrived late'; }, 300);</script>`,
  }),
  '/next': () => ({ body: '<!doctype html><title>Next</title><p id="where">Second page</p>' }),
  '/set-cookie': () => ({
    body: '<!doctype html><title>Cookie set</title><p>cookie set</p>',
    headers: { 'set-cookie': 'device_session=kept; Max-Age=3600; Path=/' },
  }),
  '/show-cookie': (request) => ({
    body: `<!doctype html><title>Cookie</title><p id="cookie">${escapeHtml(request.headers.cookie ?? 'none')}</p>`,
  }),
  '/cross-host': (_request, port) => ({
    body: `<!doctype html><title>Cross host</title>
      <a href="http://127.0.0.1:${port}/next">Other host</a>
      <a href="/next">Same host</a>
      <img src="http://127.0.0.1:${port}/pixel.gif?from=cross-host">`,
  }),
  '/pixel.gif': () => ({ body: '' }),
  // Live-view input lands at fixed viewport coordinates, so the targets sit at known
  // positions; every effect is written into #status for the driver to read back.
  '/live': () => ({
    body: `<!doctype html><title>Live page</title>
      <style>
        body { margin: 0; height: 3000px; font: 16px sans-serif; }
        #big-button { position: absolute; left: 100px; top: 100px; width: 200px; height: 100px; }
        #live-field { position: absolute; left: 400px; top: 100px; width: 200px; height: 40px; }
        #next-field { position: absolute; left: 400px; top: 200px; width: 200px; height: 40px; }
        #status { position: absolute; left: 700px; top: 100px; }
      </style>
      <button id="big-button" onclick="show('clicked', 'Big button clicked')"
        onmousedown="show('mouse-button', String(event.button))">Big button</button>
      <input id="live-field" aria-label="Live field"
        oninput="show('typed', this.value)" onkeydown="show('last-key', event.key)">
      <input id="next-field" aria-label="Next field" onfocus="show('focused', 'next field')">
      <div id="status">
        <p id="clicked">not clicked</p>
        <p id="mouse-button">none</p>
        <p id="typed"></p>
        <p id="last-key">none</p>
        <p id="focused">none</p>
        <p id="scroll-y">0</p>
        <p id="viewport"></p>
      </div>
      <script>
        function show(id, text) { document.getElementById(id).textContent = text; }
        addEventListener('scroll', () => show('scroll-y', String(Math.round(scrollY))));
        show('viewport', innerWidth + 'x' + innerHeight);
      </script>`,
  }),
  '/redirect-away': (_request, port) => ({
    status: 302,
    body: '',
    headers: { location: `http://127.0.0.1:${port}/next` },
  }),
};

export async function startPageServer(): Promise<PageServer> {
  const requests: string[] = [];
  let port = 0;
  const server = http.createServer((request, response) => {
    requests.push(`${request.headers.host ?? ''} ${request.url ?? ''}`);
    const pathname = new URL(request.url ?? '/', 'http://placeholder').pathname;
    const route = PAGES[pathname];
    if (!route) {
      response.writeHead(404, { 'content-type': 'text/html' }).end('<title>Not found</title>');
      return;
    }
    const { status = 200, body, headers = {} } = route(request, port);
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    port,
    requests,
    url: (pathname, host = 'localhost') => `http://${host}:${port}${pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function makeTempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface RemoteChromium {
  process: ChildProcess;
  webSocketUrl: string;
  stop(): Promise<void>;
}

/** A plain Chromium with --remote-debugging-port=0, standing in for a browserless endpoint. */
export async function startRemoteChromium(profileDir: string): Promise<RemoteChromium> {
  const child = spawn(
    CHROMIUM_PATH,
    [
      '--headless',
      '--disable-crash-reporter',
      '--disable-breakpad',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      '--remote-debugging-port=0',
      `--user-data-dir=${profileDir}`,
      'about:blank',
    ],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const webSocketUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no DevTools URL from Chromium:\n${output}`)), 15_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', () => reject(new Error(`Chromium exited early:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    webSocketUrl,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        process.kill(-child.pid, 'SIGKILL');
      }
      await exited;
    },
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (char) => `&#${char.charCodeAt(0)};`);
}
