import { createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { EgressCredentials, ProxyCredentials } from './egress-credentials';
import type { EgressPolicy } from './egress-policy';

export interface EgressProxyOptions {
  /**
   * Interface to listen on: loopback (the default) when the devices' browsers run on this
   * machine, an internal address when they run on other hosts (then with `credentials`).
   */
  host?: string;
  /** When set, every request must carry a device's credential (407 otherwise). */
  credentials?: EgressCredentials;
  /** What browsers dial, when not the listening address: a name that reaches it (and, maybe, other instances' proxies). */
  dialHost?: string;
  /** `preferredPort` or nothing: a port every instance shares must be had exactly. */
  portRequired?: boolean;
  /**
   * The port to listen on when it is free, else any: the port of the previous start, so
   * browsers kept across a restart (told this address at launch) keep their egress.
   */
  preferredPort?: number | null;
  /** Connections open at once through the proxy; past it new ones are cut. */
  maxConnections?: number;
  connectTimeoutMs?: number;
}

/** Header on every refusal, so a refusal is told apart from a failing site in a capture. */
export const EGRESS_REFUSAL_HEADER = 'X-Operator-Egress';

/**
 * A host nothing resolves (RFC 6761's `.invalid`) that the proxy answers itself, 204, once
 * the request carries a device's credential: a browser context asks it first, so that its
 * credential is cached and sent with every later request (browserless-provider.ts).
 */
export const EGRESS_CREDENTIAL_CHECK_URL = 'http://egress-credential-check.operator.invalid/';
const CREDENTIAL_CHECK_HOST = new URL(EGRESS_CREDENTIAL_CHECK_URL).hostname;

/** How long a refusal is remembered for the page driver to attribute a failed navigation. */
const REFUSAL_MEMORY_MS = 60_000;
const MAX_REMEMBERED_REFUSALS = 1_000;

/** Headers that concern one hop only (RFC 9110 §7.6.1) and are never passed on. */
const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * The forward proxy every device's browser must use (`--proxy-server`, with loopback's
 * implicit bypass removed): each connection it opens, whatever started it (navigations,
 * redirects, subresources, frames, fetch, WebSockets, service workers, prefetch,
 * downloads), is judged here by the egress policy before anything is connected. Chromium
 * sends hostnames, not addresses, to a proxy, so the name is resolved once, here, and the
 * checked address is the one connected to. HTTPS and WebSockets arrive as CONNECT tunnels,
 * plain HTTP as absolute-form requests; both are refused with 403 and the refusal is
 * remembered briefly so a failed navigation can be reported as `destination_blocked`.
 */
export class EgressProxy {
  private readonly refusals = new Map<string, number>();
  private readonly sockets = new Set<Socket | Duplex>();
  private readonly maxConnections: number;
  private readonly connectTimeoutMs: number;
  private readonly credentials: EgressCredentials | null;
  private readonly dialHost: string | null;

  private constructor(
    private readonly server: Server,
    private readonly policy: EgressPolicy,
    options: EgressProxyOptions,
  ) {
    this.maxConnections = options.maxConnections ?? 2_048;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.credentials = options.credentials ?? null;
    this.dialHost = options.dialHost ?? null;
  }

  static async start(policy: EgressPolicy, options: EgressProxyOptions = {}): Promise<EgressProxy> {
    const server = createServer();
    const proxy = new EgressProxy(server, policy, options);
    server.on('connection', (socket) => proxy.track(socket));
    server.on('request', (req, res) => void proxy.forwardRequest(req, res));
    server.on('connect', (req, socket, head) => void proxy.openTunnel(req, socket, head));
    server.on('upgrade', (req, socket, head) => void proxy.forwardUpgrade(req, socket, head));
    const listen = (port: number) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, options.host ?? '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    try {
      await listen(options.preferredPort ?? 0);
    } catch (error) {
      if (options.preferredPort == null || options.portRequired === true || !(error instanceof Error && 'code' in error && error.code === 'EADDRINUSE')) throw error;
      await listen(0);
    }
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The proxy's address as Chromium's --proxy-server and a browser context take it. */
  get url(): string {
    const { address, port } = this.server.address() as AddressInfo;
    const host = this.dialHost ?? address;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }

  /** What the device's browser proves itself with; null when the proxy asks no credential (on loopback). */
  credentialsFor(deviceId: string): ProxyCredentials | null {
    return this.credentials?.for(deviceId) ?? null;
  }

  /**
   * Whether a connection to the host and port of `url` was refused at or after `sinceMs`:
   * by this proxy, as it remembers. Behind a name other instances' proxies share, the
   * browser may have gone through another one, whose memory is not here; the policy,
   * the same on every instance, then says whether the destination is one it refuses.
   */
  async refusedSince(url: string, sinceMs: number): Promise<boolean> {
    const target = targetOfUrl(url);
    if (target === null) return false;
    const at = this.refusals.get(targetKey(target.hostname, target.port));
    if (at !== undefined && at >= sinceMs) return true;
    if (this.dialHost === null) return false;
    const decision = await this.policy.check(target.hostname, target.port);
    return !decision.ok && decision.reason === 'blocked_address';
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private track(socket: Socket | Duplex): void {
    if (this.sockets.size >= this.maxConnections) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** CONNECT host:port — https, wss and anything else Chromium tunnels. */
  private async openTunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const admitted = await this.admitRaw(req, client, parseAuthority(req.url ?? ''));
    if (admitted === null) return;
    const upstream = this.connectUpstream(admitted.address, admitted.target.port, client);
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
  }

  /** Absolute-form plain HTTP requests: GET http://host/path. */
  private async forwardRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.isDevice(req)) {
      res.writeHead(407, { 'Proxy-Authenticate': PROXY_CHALLENGE, 'Content-Type': 'text/plain', Connection: 'close' }).end('Proxy Authentication Required');
      return;
    }
    const target = parseAbsoluteHttpUrl(req.url ?? '');
    if (target === null) {
      // Not a proxy request (e.g. a page fetching the proxy as an origin): nothing to serve.
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('Bad Request');
      return;
    }
    if (target.hostname === CREDENTIAL_CHECK_HOST) {
      res.writeHead(204).end();
      return;
    }
    const decision = await this.policy.check(target.hostname, target.port);
    if (!decision.ok) {
      this.remember(target.hostname, target.port);
      res.writeHead(403, { 'Content-Type': 'text/plain', [EGRESS_REFUSAL_HEADER]: 'destination_blocked', Connection: 'close' });
      res.end('This destination is blocked by the device egress policy.');
      return;
    }
    const upstream = httpRequest({
      host: decision.address.address,
      port: target.port,
      method: req.method,
      path: target.path,
      headers: endToEndHeaders(req),
      setHost: false,
      agent: false,
      timeout: this.connectTimeoutMs,
    });
    upstream.on('timeout', () => upstream.destroy());
    upstream.on('response', (response) => {
      res.writeHead(response.statusCode ?? 502, endToEndHeaders(response));
      response.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' }).end('Bad Gateway');
      else res.destroy();
    });
    req.pipe(upstream);
  }

  /** Absolute-form requests asking to upgrade (WebSockets over plain HTTP proxies). */
  private async forwardUpgrade(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const admitted = await this.admitRaw(req, client, parseAbsoluteHttpUrl(req.url ?? ''));
    if (admitted === null) return;
    const upstream = this.connectUpstream(admitted.address, admitted.target.port, client);
    upstream.once('connect', () => {
      const headerLines: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!;
        if (!/^proxy-/i.test(name)) headerLines.push(`${name}: ${req.rawHeaders[i + 1]}`);
      }
      upstream.write(`${req.method} ${admitted.target.path} HTTP/1.1\r\n${headerLines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
  }

  /**
   * Judges the target of a raw-socket request (a tunnel or an upgrade): the target with
   * the address to connect to, or null once the client was answered 407 (no device's
   * credential), 400 (unparsable) or 403 (refused).
   */
  private async admitRaw<Target extends { hostname: string; port: number }>(req: IncomingMessage, client: Duplex, target: Target | null): Promise<{ target: Target; address: string } | null> {
    client.on('error', () => client.destroy());
    if (!this.isDevice(req)) {
      client.end(`HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: ${PROXY_CHALLENGE}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return null;
    }
    if (target === null) {
      refuseRaw(client, 400, 'Bad Request');
      return null;
    }
    const decision = await this.policy.check(target.hostname, target.port);
    if (!decision.ok) {
      this.remember(target.hostname, target.port);
      refuseRaw(client, 403, 'Forbidden');
      return null;
    }
    return { target, address: decision.address.address };
  }

  /** Whether the request may use the proxy: any, on loopback; a device's credential, on a network. */
  private isDevice(req: IncomingMessage): boolean {
    return this.credentials === null || this.credentials.deviceOf(req.headers['proxy-authorization']) !== null;
  }

  private connectUpstream(address: string, port: number, client: Duplex): Socket {
    const upstream = connect({ host: address, port, timeout: this.connectTimeoutMs });
    this.track(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
    });
    upstream.on('timeout', () => upstream.destroy());
    upstream.on('error', () => {
      if (!connected && client.writable) refuseRaw(client, 502, 'Bad Gateway');
      else client.destroy();
    });
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    return upstream;
  }

  private remember(hostname: string, port: number): void {
    const now = Date.now();
    if (this.refusals.size >= MAX_REMEMBERED_REFUSALS) {
      for (const [key, at] of this.refusals) if (now - at > REFUSAL_MEMORY_MS) this.refusals.delete(key);
      if (this.refusals.size >= MAX_REMEMBERED_REFUSALS) this.refusals.clear();
    }
    this.refusals.set(targetKey(hostname, port), now);
  }
}

const PROXY_CHALLENGE = 'Basic realm="device egress"';

function refuseRaw(client: Duplex, status: 400 | 403 | 502, reason: string): void {
  const marker = status === 403 ? `${EGRESS_REFUSAL_HEADER}: destination_blocked\r\n` : '';
  client.end(`HTTP/1.1 ${status} ${reason}\r\n${marker}Content-Length: 0\r\nConnection: close\r\n\r\n`);
}

function endToEndHeaders(message: IncomingMessage): OutgoingHttpHeaders {
  const named = new Set((message.headers.connection ?? '').split(',').map((name) => name.trim().toLowerCase()));
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) headers[name] = value;
  }
  return headers;
}

/** CONNECT's "host:port" (IPv6 in brackets). */
function parseAuthority(authority: string): { hostname: string; port: number } | null {
  try {
    const url = new URL(`http://${authority}`);
    if (url.pathname !== '/' || url.username !== '' || !/:\d+$/.test(authority)) return null;
    return { hostname: url.hostname, port: Number(url.port || 80) };
  } catch {
    return null;
  }
}

function parseAbsoluteHttpUrl(raw: string): { hostname: string; port: number; path: string } | null {
  if (!/^http:\/\//i.test(raw)) return null;
  try {
    const url = new URL(raw);
    return { hostname: url.hostname, port: Number(url.port || 80), path: `${url.pathname}${url.search}` };
  } catch {
    return null;
  }
}

function targetKey(hostname: string, port: number): string {
  return `${hostname.toLowerCase()}:${port}`;
}

function targetOfUrl(raw: string): { hostname: string; port: number } | null {
  try {
    const url = new URL(raw);
    const defaultPort = url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
    return { hostname: url.hostname, port: Number(url.port || defaultPort) };
  } catch {
    return null;
  }
}
