import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The bytes /file?bytes=N serves: a fixed pattern, so a test can compute them too. */
export function fileBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let index = 0; index < size; index += 1) bytes[index] = 32 + ((index * 7) % 90);
  return bytes;
}

/**
 * Pages for recording tests, on 127.0.0.1: `/red` and `/blue` fill the viewport with one
 * colour and show "Ready" after `?after=<ms>` (so a task's `wait for "Ready"` keeps the
 * page on screen that long); `/paint` is red until its "Paint" button turns it blue;
 * `/file?bytes=N` downloads N bytes.
 */
export async function startColourPages(): Promise<{ url(pathname: string): string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const colour = url.pathname.slice(1);
    if (colour === 'red' || colour === 'blue') {
      const after = Number(url.searchParams.get('after') ?? '0');
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><title>${colour}</title>
        <style>html, body { margin: 0; height: 100%; background: ${colour}; color: ${colour} }</style>
        <p id="status">Waiting</p>
        <script>setTimeout(() => { document.getElementById('status').textContent = 'Ready' }, ${after})</script>`);
      return;
    }
    if (url.pathname === '/paint') {
      // Red until the "Paint" button is clicked, blue from then on: a step whose effect is a repaint.
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><title>paint</title>
        <style>html, body { margin: 0; height: 100%; background: red } button { font-size: 8px }</style>
        <button onclick="document.body.style.background = 'blue'">Paint</button>`);
      return;
    }
    if (url.pathname === '/downloads') {
      // One link per size given: <a id="file-<n>"> downloads report-<n>.csv of n bytes.
      const sizes = url.searchParams.getAll('bytes');
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><title>Downloads</title>${sizes.map((size) => `<p><a id="file-${size}" href="/file?bytes=${size}">Get ${size}</a></p>`).join('')}`);
      return;
    }
    if (url.pathname === '/file') {
      const size = Number(url.searchParams.get('bytes') ?? '0');
      response.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(size), 'content-disposition': `attachment; filename="report-${size}.csv"` });
      response.end(fileBytes(size));
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
