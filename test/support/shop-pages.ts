import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The one-time code a human gives in the credentials tests; it must show up nowhere. */
export const SECRET = 'otp-7Hq2-secret-93518';

export interface ShopPages {
  /** `http://127.0.0.1:<port>` */
  base: string;
  close(): Promise<void>;
}

/**
 * Pages for structured results and typed escalations, on 127.0.0.1: `/shop` (a heading, a
 * price, a list, a Buy button that sets #status to "Bought") and `/login` (a text field
 * whose Send button checks the code in the page, so it never travels in a URL, and says
 * whether the field was masked while typed).
 */
export async function startShopPages(): Promise<ShopPages> {
  const server = http.createServer((request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (path === '/shop') {
      response.end(`<!doctype html><title>Shop</title><h1>Blue kettle</h1><p class="price">Total: $1,234.50</p>
        <ul><li>steel</li><li>blue</li></ul>
        <button onclick="document.getElementById('status').textContent = 'Bought'">Buy now</button><p id="status">Not bought</p>`);
    } else if (path === '/login') {
      response.end(`<!doctype html><title>Sign in</title><label for="code">Code</label><input id="code" type="text">
        <button onclick="const f = document.getElementById('code'); document.getElementById('result').textContent = (f.value === '${SECRET}' ? 'Code accepted' : 'Wrong code') + (getComputedStyle(f).webkitTextSecurity === 'disc' ? ', masked' : ', visible')">Send</button>
        <p id="result">Waiting</p>`);
    } else {
      response.writeHead(404).end('<title>Not found</title>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
