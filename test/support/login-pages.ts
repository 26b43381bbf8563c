import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A sign-in site for the credential vault's tests, on 127.0.0.1 (also reachable as
 * localhost, another site to the vault's domain guard):
 * - `/login`: username, password and a one-time code, checked on POST against the account
 *   and a TOTP code this module computes itself (RFC 6238, SHA-1, 6 digits, 30 s; the
 *   current or the previous period), never with the service's code;
 * - `/sms`: a code checked against `expectSmsCode`;
 * - `/probe`: three large text fields: `#filled` (empty, for the task), `#visible` holding
 *   `probeText` in clear and `#masked` holding it styled as discs, so one screenshot shows
 *   what the field would look like either way; "Gate open" appears after `gate_ms`.
 * Every field reports each change it sees to `/typed` (`typed` lists the pages' hosts).
 * `moveLoginTo(host)` makes a GET of /login on any other host redirect to the same page on
 * `host` (a site that moved), until `moveLoginTo(null)`.
 */
export interface LoginPages {
  url(pathname: string, host?: string): string;
  /** Values POSTed to /login and /sms, in order. */
  readonly submitted: Array<Record<string, string>>;
  /** `host` of each input event the pages saw. */
  readonly typed: string[];
  expectSmsCode(code: string): void;
  moveLoginTo(host: string | null): void;
  close(): Promise<void>;
}

export interface Account {
  username: string;
  password: string;
  /** The shared TOTP secret's bytes. */
  totpKey: Buffer;
}

/** RFC 4648 base32 without padding: how a TOTP secret is handed to the vault. */
export function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const byte of bytes) bits += byte.toString(2).padStart(8, '0');
  let out = '';
  for (let index = 0; index < bits.length; index += 5) out += alphabet[parseInt(bits.slice(index, index + 5).padEnd(5, '0'), 2)];
  return out;
}

/** RFC 6238 with SHA-1, written out here so the test does not check the service with its own code. */
export function independentTotp(key: Buffer, atMs: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[19]! & 0xf;
  const value = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(value % 1_000_000).padStart(6, '0');
}

const REPORT_INPUT = `<script>document.addEventListener('input', () => fetch('/typed', { method: 'POST' }));</script>`;

export async function startLoginPages(account: Account, probeText: string): Promise<LoginPages> {
  const submitted: Array<Record<string, string>> = [];
  const typed: string[] = [];
  let smsCode: string | null = null;
  let loginHost: string | null = null;
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    response.setHeader('content-type', 'text/html; charset=utf-8');
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      if (url.pathname === '/typed') {
        typed.push(request.headers.host?.split(':')[0] ?? '');
        response.end();
      } else if (url.pathname === '/login' && request.method === 'POST') {
        submitted.push(form);
        const now = Date.now();
        const codes = [independentTotp(account.totpKey, now), independentTotp(account.totpKey, now - 30_000)];
        const ok = form.username === account.username && form.password === account.password && codes.includes(form.code ?? '');
        response.end(`<!doctype html><title>${ok ? 'Account' : 'Denied'}</title><p id="welcome">${ok ? `Welcome ${account.username}` : 'Denied'}</p>`);
      } else if (url.pathname === '/login' && loginHost !== null && request.headers.host?.split(':')[0] !== loginHost) {
        response.statusCode = 302;
        response.setHeader('location', `http://${loginHost}:${port}/login`);
        response.end();
      } else if (url.pathname === '/login') {
        response.end(`<!doctype html><title>Sign in</title>
          <form method="post" action="/login">
            <label for="username">Username</label><input id="username" name="username" autocomplete="off">
            <label for="password">Password</label><input id="password" name="password" type="password">
            <label for="code">One-time code</label><input id="code" name="code" inputmode="numeric" autocomplete="off">
            <button type="submit">Sign in</button>
          </form>${REPORT_INPUT}`);
      } else if (url.pathname === '/sms' && request.method === 'POST') {
        submitted.push(form);
        const ok = smsCode !== null && form.sms === smsCode;
        response.end(`<!doctype html><title>Checked</title><p id="result">${ok ? 'Verified' : 'Wrong code'}</p>`);
      } else if (url.pathname === '/sms') {
        response.end(`<!doctype html><title>Verify</title>
          <form method="post" action="/sms"><label for="sms">SMS code</label><input id="sms" name="sms" autocomplete="off"><button type="submit">Verify</button></form>${REPORT_INPUT}`);
      } else if (url.pathname === '/probe') {
        const gateMs = Number(url.searchParams.get('gate_ms') ?? '1500');
        const value = probeText.replace(/"/g, '&quot;');
        response.end(`<!doctype html><title>Probe</title>
          <style>
            body { margin: 0; background: #fff; }
            input { position: absolute; left: 20px; width: 700px; height: 60px; box-sizing: border-box; font: 40px monospace; color: #000; background: #fff; border: 2px solid #000; padding: 0 8px; outline: none; caret-color: transparent; }
            #gate { position: absolute; left: 20px; top: 300px; font: 20px sans-serif; }
          </style>
          <input id="filled" aria-label="Filled" autocomplete="off" style="top: 20px">
          <input id="visible" aria-label="Visible" style="top: 110px" value="${value}" tabindex="-1">
          <input id="masked" aria-label="Masked" style="top: 200px; -webkit-text-security: disc" value="${value}" tabindex="-1">
          <p id="gate">Gate closed</p>
          <script>setTimeout(() => { document.getElementById('gate').textContent = 'Gate open'; }, ${gateMs});</script>`);
      } else {
        response.statusCode = 404;
        response.end('not found');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (pathname, host = '127.0.0.1') => `http://${host}:${port}${pathname}`,
    submitted,
    typed,
    expectSmsCode: (code) => {
      smsCode = code;
    },
    moveLoginTo: (host) => {
      loginHost = host;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Fixed positions of /probe's fields in CSS pixels, inside their borders. */
export const PROBE_FIELDS = {
  filled: { x: 24, y: 24, width: 692, height: 52 },
  visible: { x: 24, y: 114, width: 692, height: 52 },
  masked: { x: 24, y: 204, width: 692, height: 52 },
} as const;
