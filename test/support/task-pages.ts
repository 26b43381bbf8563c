import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Pages for task tests, served on 127.0.0.1 (also reachable as localhost, another host to
 * the allow-list), or on `address` (the runner's on a network of network-hosts.ts, for
 * browsers on other hosts).
 */
export interface TaskPages {
  /** On the address served; `host` names it otherwise (localhost for 127.0.0.1). */
  url(pathname: string, host?: string): string;
  /**
   * Opens the gate `name`: the page `/gated?name=<name>` (the echo field of `/echo`) shows
   * "Gate open" once it is, so a task can be made to wait for the test.
   */
  openGate(name: string): void;
  close(): Promise<void>;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

export async function startTaskPages(address = '127.0.0.1'): Promise<TaskPages> {
  const openGates = new Set<string>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    response.setHeader('content-type', 'text/html; charset=utf-8');
    if (url.pathname === '/gated') {
      // The page asks every 200 ms whether its gate is open: its state (what was typed) lives
      // only in the page, so a task that finishes here proves it kept its page.
      const name = JSON.stringify(url.searchParams.get('name') ?? '');
      response.end(`<!doctype html><title>Gated</title>
        <input id="field" aria-label="Your name" oninput="document.getElementById('echo').textContent = this.value">
        <p id="echo"></p><p id="gate">Gate closed</p>
        <script>
          setInterval(async () => {
            const state = await fetch('/gate-state?name=' + encodeURIComponent(${name})).then((r) => r.text(), () => 'closed');
            if (state === 'open') document.getElementById('gate').textContent = 'Gate open';
          }, 200);
        </script>`);
    } else if (url.pathname === '/timed') {
      // The echo field, and "Gate open" once `after_ms` passed since the page loaded: a gate
      // the page opens by itself, needing no network once loaded.
      const afterMs = Number(url.searchParams.get('after_ms') ?? '0');
      response.end(`<!doctype html><title>Timed</title>
        <input id="field" aria-label="Your name" oninput="document.getElementById('echo').textContent = this.value">
        <p id="echo"></p><p id="gate">Gate closed</p>
        <script>setTimeout(() => { document.getElementById('gate').textContent = 'Gate open'; }, ${afterMs});</script>`);
    } else if (url.pathname === '/gate-state') {
      response.setHeader('content-type', 'text/plain');
      response.end(openGates.has(url.searchParams.get('name') ?? '') ? 'open' : 'closed');
    } else if (url.pathname === '/form') {
      response.end(`<!doctype html><title>Sign up</title>
        <form action="/submit" method="get">
          <label for="email">Email</label><input id="email" name="email">
          <button type="submit">Submit</button>
        </form>`);
    } else if (url.pathname === '/submit') {
      response.end(`<!doctype html><title>Thanks</title>
        <p id="message">Welcome, ${escapeHtml(url.searchParams.get('email') ?? '')}</p>`);
    } else if (url.pathname === '/takeover') {
      // A wall only a human passes: the agent waits for "Unlocked"; a click at (150, 60)
      // through a control session unlocks it.
      response.end(`<!doctype html><title>Locked</title>
        <style>body { margin: 0 } #unlock { position: absolute; left: 0; top: 0; width: 300px; height: 120px }</style>
        <button id="unlock" onclick="document.getElementById('status').textContent = 'Unlocked'">Unlock</button>
        <p id="status" style="margin-top: 200px">Locked</p>`);
    } else if (url.pathname === '/echo') {
      // A field a person types into during a takeover; the agent reads what was typed from #echo.
      response.end(`<!doctype html><title>Echo</title>
        <style>body { margin: 0; font: 20px sans-serif } #field { position: absolute; left: 20px; top: 20px; width: 400px; height: 60px; font-size: 24px }</style>
        <input id="field" aria-label="Your name" oninput="document.getElementById('echo').textContent = this.value">
        <p id="echo" style="margin-top: 120px"></p>
        <h1 style="margin: 40px 20px 0">Customer details</h1><p style="margin: 8px 20px">Type the customer's name in the field above.</p>`);
    } else if (url.pathname === '/late') {
      // Text that appears `ms` after the page loaded, for a `wait for` that spans a while.
      const ms = Number(url.searchParams.get('ms') ?? '1000');
      response.end(`<!doctype html><title>Late</title><p id="status">Waiting</p>
        <script>setTimeout(() => { document.getElementById('status').textContent = 'Arrived at last'; }, ${ms});</script>`);
    } else if (url.pathname === '/plain') {
      response.end('<!doctype html><title>Plain</title><p id="text">Nothing happens here</p>');
    } else {
      response.writeHead(404).end('<title>Not found</title>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (pathname, host = address) => `http://${host}:${port}${pathname}`,
    openGate: (name) => openGates.add(name),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
