// Fixtures for the browser tests: a page server on 127.0.0.1 and a Chromium started by
// hand for the browserless provider. Not imported by production code.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { loadConfig } from '../../server/core/config.js';
import { BrowserUsers } from '../../server/browser/browser-users.js';
import { chromiumCommand } from '../../server/browser/chromium-command.js';
import { removeSocketFolder, singletonSocketFolder } from '../../server/browser/chromium-process.js';
import { handProfileTo } from '../../server/browser/profile-access.js';
import { systemStateDirectoryFor } from '../../server/os/system-state-directory.js';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The users and sandbox rule the service gives local browsers by default (server/config.ts). */
export const BROWSER_ISOLATION = {
  ...(({ users, allowUnsandboxed }) => ({ users, allowUnsandboxed }))(loadConfig({}).browser),
  // A test that never closes its provider leaves its browsers' keepers this long.
  keepSecs: 20,
};

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
  /** How long the server waits before it answers. */
  delayMs?: number;
}

type Route = (request: http.IncomingMessage, port: number) => RouteResponse;

const PAGES: Record<string, Route> = {
  // A form drawn by script a moment after the page loaded, as a single-page app draws it.
  '/drawn-later': () => ({
    body: `<!doctype html><title>Drawn later</title><main id="app"></main>
      <script>setTimeout(() => { document.getElementById('app').innerHTML = '<label>Access code <input id="code"></label><button onclick="document.title = document.getElementById(\\'code\\').value">Go</button>'; }, 600);</script>`,
  }),
  // A banner slides in above the button as the mouse first moves, where the button was:
  // a press at the point computed before lands on the banner. #presses lists what got one.
  '/moving-target': () => ({
    body: `<!doctype html><title>Moving target</title>
      <div id="top"></div><button id="target">Order now</button>
      <p id="out">nothing yet</p><p id="presses"></p>
      <script>
        const log = (what) => (event) => { document.getElementById('presses').textContent += what + ':' + event.type + ' '; };
        const target = document.getElementById('target');
        for (const type of ['mousedown', 'click']) target.addEventListener(type, log('target'));
        target.addEventListener('click', () => { document.getElementById('out').textContent = 'Ordered'; });
        addEventListener('mousemove', () => {
          if (document.getElementById('banner')) return;
          const banner = document.createElement('div');
          banner.id = 'banner';
          banner.style.cssText = 'height: 150px; background: #fc0';
          banner.textContent = 'Special offer';
          for (const type of ['mousedown', 'click']) banner.addEventListener(type, log('banner'));
          document.getElementById('top').append(banner);
        }, { once: true });
      </script>`,
  }),
  // A menu that opens under the pointer as its button is pressed: the release picks the
  // item there, as a person's would.
  '/press-menu': () => ({
    body: `<!doctype html><title>Press menu</title>
      <div style="position: relative; width: 200px">
        <button id="menu" style="width: 200px; height: 40px">Choose size</button>
        <div id="item" style="display: none; position: absolute; inset: 0; background: #eef">Large</div>
      </div>
      <p id="out">nothing yet</p>
      <script>
        document.getElementById('menu').addEventListener('mousedown', () => { document.getElementById('item').style.display = 'block'; });
        document.getElementById('item').addEventListener('mouseup', () => { document.getElementById('out').textContent = 'Large chosen'; });
      </script>`,
  }),
  // A see-through layer over the whole page, which takes every press at any point.
  '/covered-target': () => ({
    body: `<!doctype html><title>Covered target</title>
      <button id="target" onclick="document.getElementById('out').textContent = 'Ordered'">Order now</button>
      <p id="out">nothing yet</p><p id="presses"></p>
      <div id="layer" style="position: fixed; inset: 0; background: transparent"></div>
      <script>
        document.getElementById('layer').addEventListener('mousedown', () => { document.getElementById('presses').textContent += 'layer '; });
      </script>`,
  }),
  // Each button opens a JavaScript dialog; #out shows what the page was answered.
  '/dialogs': () => ({
    body: `<!doctype html><title>Dialogs</title>
      <button onclick="alert('Saved'); document.getElementById('out').textContent = 'alerted'">Alert</button>
      <button onclick="document.getElementById('out').textContent = confirm('Delete it?') ? 'confirmed' : 'declined'">Confirm</button>
      <button onclick="document.getElementById('out').textContent = 'named ' + prompt('Your name?', 'Ada')">Prompt</button>
      <p id="out">nothing yet</p>`,
  }),
  // A button whose script navigates, and a link to a place in the same document.
  '/script-navigation': () => ({
    body: `<!doctype html><title>Script navigation</title>
      <button onclick="location.href = '/next'">Continue</button>
      <a href="#details">Details</a><div style="height: 3000px"></div><h2 id="details">Details here</h2>`,
  }),
  // Shows whether the page is in front (visible) or behind another tab (hidden).
  '/visibility': () => ({
    body: `<!doctype html><title>Visibility</title><p id="visibility"></p><button>Press</button>
      <script>const show = () => { document.getElementById('visibility').textContent = document.visibilityState; }; show(); document.addEventListener('visibilitychange', show);</script>`,
  }),
  // Elements carrying a framework's own objects, as React keeps its fiber (cyclic) on each.
  '/framework-form': () => ({
    body: `<!doctype html><title>Framework form</title>
      <label>Access code <input id="code"></label><button onclick="document.title = document.getElementById('code').value">Go</button>
      <script>for (const element of document.querySelectorAll('input, button')) { const fiber = { element }; fiber.self = fiber; element.__reactFiber = fiber; }</script>`,
  }),
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
  // The first "a" typed makes the next animation frame take 300 ms; #log tells when that
  // frame's script ended and when a Tab was dispatched (its event's time), by the page's clock.
  // The frame is asked for once the key is released, the typing's last event: asked at its
  // press, on a loaded host the frame came before the release, which then waited for it.
  '/paint-later': () => ({
    body: `<!doctype html><title>Paint later</title><input aria-label="Slow field"><p id="log">{}</p>
      <script>
        const log = {};
        const at = (time) => Math.round(performance.timeOrigin + time);
        document.querySelector('input').addEventListener('keyup', (event) => {
          if (event.key === 'a' && log.busyEnd === undefined) {
            log.busyEnd = 0;
            requestAnimationFrame(() => {
              const end = performance.now() + 300;
              while (performance.now() < end);
              log.busyEnd = at(performance.now());
              document.getElementById('log').textContent = JSON.stringify(log);
            });
          }
        });
        document.querySelector('input').addEventListener('keydown', (event) => {
          if (event.key === 'Tab') {
            log.tabAt = at(event.timeStamp);
            document.getElementById('log').textContent = JSON.stringify(log);
          }
        });
      </script>`,
  }),
  // Buttons a click must bring into view first (one within the viewport's bounds but cut
  // off by its scroller), and one already in view: each trusted press is listed as
  // id:page scroll:scroller scroll (the viewport is 1280 x 800).
  '/out-of-view': () => ({
    body: `<!doctype html><title>Out of view</title>
      <p id="presses"></p>
      <div id="scroller" style="height: 100px; overflow: auto"><div style="height: 150px"></div><button id="inner">Inner</button></div>
      <button id="near" style="margin-top: 500px">Near</button>
      <div style="height: 3000px"></div>
      <button id="far">Far</button>
      <script>
        for (const button of document.querySelectorAll('button')) {
          button.addEventListener('mousedown', (event) => {
            if (event.isTrusted) document.getElementById('presses').textContent += button.id + ':' + Math.round(scrollY) + ':' + Math.round(document.getElementById('scroller').scrollTop) + ' ';
          });
        }
      </script>`,
  }),
  // A link to a page whose server answers after 1.5 s.
  '/slow-link': () => ({ body: '<!doctype html><title>Slow link</title><a id="go" href="/slow-next">Go on</a>' }),
  '/slow-next': () => ({ body: '<!doctype html><title>Slow next</title><p>there</p>', delayMs: 1_500 }),
  // A server that answers after 12 s: a navigation to it stays pending that long.
  '/slow-answer': () => ({ body: '<!doctype html><title>Slow</title><p>at last</p>', delayMs: 12_000 }),
  // A script that never yields, a moment after the page loaded: its renderer answers nothing more.
  '/hang': () => ({ body: '<!doctype html><title>Hang</title><p>busy</p><script>setTimeout(() => { for (;;) {} }, 200);</script>' }),
  '/set-cookie': () => ({
    body: '<!doctype html><title>Cookie set</title><p>cookie set</p>',
    headers: { 'set-cookie': 'device_session=kept; Max-Age=3600; Path=/' },
  }),
  '/show-cookie': (request) => ({
    body: `<!doctype html><title>Cookie</title><p id="cookie">${escapeHtml(request.headers.cookie ?? 'none')}</p>`,
  }),
  '/set-storage': () => ({
    body: `<!doctype html><title>Storage set</title><script>localStorage.setItem('device_note', 'kept')</script>`,
  }),
  '/show-storage': () => ({
    body: `<!doctype html><title>Storage</title><p id="storage"></p>
      <script>document.getElementById('storage').textContent = localStorage.getItem('device_note') ?? 'none'</script>`,
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
  // Open shadow roots: a labelled field and a button in one, a nested shadow root, a
  // button whose label is slotted in from the light DOM, and text that arrives late.
  '/shadow': () => ({
    body: `<!doctype html><title>Shadow page</title>
      <account-panel></account-panel>
      <fancy-button>Pay <b>now</b></fancy-button>
      <p id="out">nothing yet</p>
      <script>
        const show = (text) => { document.getElementById('out').textContent = text; };
        customElements.define('account-panel', class extends HTMLElement {
          connectedCallback() {
            const root = this.attachShadow({ mode: 'open' });
            root.innerHTML = '<style>p { margin: 4px }</style>'
              + '<label for="nick">Nickname</label><input id="nick">'
              + '<button id="save">Save profile</button>'
              + '<p id="status">not saved</p><p id="late"></p><inner-widget></inner-widget>';
            root.getElementById('save').addEventListener('click', () => {
              root.getElementById('status').textContent = 'Saved ' + root.getElementById('nick').value;
            });
            setTimeout(() => { root.getElementById('late').textContent = 'Shadow arrived LATE'; }, 300);
          }
        });
        customElements.define('inner-widget', class extends HTMLElement {
          connectedCallback() {
            this.attachShadow({ mode: 'open' }).innerHTML = '<button>Nested action</button>';
            this.shadowRoot.querySelector('button').addEventListener('click', () => show('Nested clicked'));
          }
        });
        customElements.define('fancy-button', class extends HTMLElement {
          connectedCallback() {
            this.attachShadow({ mode: 'open' }).innerHTML = '<button><slot></slot></button>';
            this.shadowRoot.querySelector('button').addEventListener('click', () => show('Fancy clicked'));
          }
        });
      </script>`,
  }),
  // Loaded in iframes from either host; #result records what its button saw.
  '/frame-form': () => ({
    body: `<!doctype html><title>Payment frame</title>
      <label for="card">Card number</label><input id="card">
      <button id="pay">Pay</button>
      <p id="result">unpaid</p>
      <p id="late"></p>
      <script>
        document.getElementById('pay').addEventListener('click', () => {
          document.getElementById('result').textContent = 'Paid with ' + document.getElementById('card').value;
        });
        setTimeout(() => { document.getElementById('late').textContent = 'Frame arrived LATE'; }, 300);
      </script>`,
  }),
  '/same-origin-frame': () => ({ body: framedPage('/frame-form') }),
  '/cross-origin-frame': (_request, port) => ({ body: framedPage(`http://127.0.0.1:${port}/frame-form`) }),
  // More interactive elements than one observation lists, all below the fold, with the
  // payment frame in view.
  '/crowded-frame': () => ({
    body: `<!doctype html><title>Crowded</title>
      <iframe src="/frame-form" title="Payment"></iframe>
      <div style="margin-top: 2000px">
        ${Array.from({ length: 200 }, (_unused, index) => `<a href="/next">Link ${index + 1}</a>`).join(' ')}
      </div>`,
  }),
  // The frame's own document looks visible; only its iframe element says it is not.
  '/hidden-frame': () => ({
    body: `<!doctype html><title>Hidden frame</title>
      <p>Nothing else here</p>
      <iframe src="/frame-form" title="Hidden payment" style="visibility: hidden"></iframe>`,
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
    const { status = 200, body, headers = {}, delayMs = 0 } = route(request, port);
    setTimeout(() => response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body), delayMs);
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

/**
 * A test's temporary folder (0700, as mkdtemp makes it). As root, a data directory inside
 * it keeps its browser profiles under /var/lib (system-state-directory.ts), out of the
 * folder: remove() deletes those too, for the folder and the folders two levels below it
 * (where tests put their data directories), or every run would leave its profiles behind.
 */
export async function makeTempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return {
    dir,
    async remove() {
      const dataDirs = [dir, ...(await foldersBelow(dir, 2))];
      await Promise.all(dataDirs.map((dataDir) => rm(systemStateDirectoryFor(dataDir), { recursive: true, force: true })));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function foldersBelow(dir: string, depth: number): Promise<string[]> {
  if (depth === 0) return [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => path.join(dir, entry.name));
  return [...folders, ...(await Promise.all(folders.map((folder) => foldersBelow(folder, depth - 1)))).flat()];
}

/**
 * A Chromium started as the local provider starts one (sandboxed; as root, under a
 * browser uid of its own on a profile handed to it), with the caller's flags: for tests
 * and benchmarks that drive a browser outside the provider. `profileDir`'s parent must
 * let that uid pass (a mkdtemp folder directly under /tmp does). The uid is given back
 * when the browser disconnects.
 */
export async function launchChromiumAsTheService(profileDir: string, flags: readonly string[], chromiumPath = CHROMIUM_PATH): Promise<Browser> {
  const claim = process.getuid?.() === 0 ? await new BrowserUsers(BROWSER_ISOLATION.users).claim() : null;
  await handProfileTo(profileDir, claim?.user ?? null);
  const command = chromiumCommand({ chromiumPath, user: claim?.user ?? null, profileDir, headless: true, sandboxed: true, flags });
  const browser = await puppeteer.launch({
    executablePath: command.executablePath,
    args: command.args,
    ignoreDefaultArgs: true,
    env: command.env,
    pipe: true,
    defaultViewport: { width: 1280, height: 800 },
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  if (claim !== null) browser.once('disconnected', () => void claim.release());
  // puppeteer kills the browser right after asking it to close: Chromium has removed its
  // profile's singleton links by then, not yet the folder of its socket in /tmp they named.
  // It goes as a killed device browser's does (chromium-process.ts), or each browser left one.
  const socketFolder = await singletonSocketFolder(profileDir);
  if (socketFolder !== null) browser.process()?.once('exit', () => void removeSocketFolder(socketFolder, claim?.user.uid ?? process.getuid!()).catch(() => undefined));
  return browser;
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

/** A page whose own "Pay with PayPal" link competes with the frame's "Pay" button. */
function framedPage(frameSrc: string): string {
  return `<!doctype html><title>Framed</title>
    <label>Main note <input id="note"></label>
    <a href="/next">Pay with PayPal later</a>
    <iframe src="${frameSrc}" title="Payment" style="width: 600px; height: 300px"></iframe>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (char) => `&#${char.charCodeAt(0)};`);
}
