// The URLs a browser endpoint serves, and what its HTTP side says about capacity. Two
// kinds of endpoint: a browserless endpoint (ws://host:3000/?token=..., /chromium,
// /chrome ...) starts a dedicated browser per connection; a raw DevTools endpoint
// (ws://host:port/devtools/browser/<id>) names one running browser everyone shares.
import { z } from 'zod';
import { DEVICE_DISABLED_FEATURES } from './chromium-features.js';
import { LOOPBACK_THROUGH_PROXY } from './egress-flags.js';
import { BrowserLaunchError, type EgressGate } from './types.js';

/**
 * The Chromium switch of the egress policy that only the browser's command line can
 * carry: WebRTC may only use UDP through a proxy, and there is none for UDP. The proxy
 * itself is set on the device's browser context, not on the command line: browserless
 * appends its own host to `--proxy-bypass-list` whenever `--proxy-server` is among the
 * launch arguments, which would let pages reach its loopback address directly.
 */
const WEBRTC_THROUGH_PROXY_ONLY = '--force-webrtc-ip-handling-policy=disable_non_proxied_udp';

/**
 * The URL a device connects to. On a browserless endpoint: `timeout=0`, since a device's
 * browser lives until the device sleeps and browserless would otherwise end the session
 * after its TIMEOUT (30 s by default); and in the `launch` JSON parameter the switch of
 * the features no device's browser runs with (chromium-features.ts) and, with an egress
 * proxy, the WebRTC switch (browserless 2.x reads launch arguments there; its legacy
 * `--flag` query parameters would replace any `args` the operator put in `launch`). A raw
 * DevTools endpoint is used as it is: its browser is already running.
 */
export function deviceEndpoint(endpoint: string, egress: EgressGate | null): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new BrowserLaunchError('the browserless endpoint is not a valid URL (check BROWSERLESS_URL)', false);
  }
  if (isSharedBrowserEndpoint(url)) return url;
  url.searchParams.set('timeout', '0');
  const launch = launchOptionsOf(url);
  const args = Array.isArray(launch.args) ? launch.args.filter((arg): arg is string => typeof arg === 'string') : [];
  // browserless launches with puppeteer, which merges every --disable-features into one.
  url.searchParams.set('launch', JSON.stringify({ ...launch, args: [...args, DEVICE_DISABLED_FEATURES, ...(egress === null ? [] : [WEBRTC_THROUGH_PROXY_ONLY])] }));
  return url;
}

/** The launch options already in the configured URL: JSON, or base64 JSON as browserless also accepts. */
function launchOptionsOf(url: URL): Record<string, unknown> {
  const raw = url.searchParams.get('launch');
  if (raw === null) return {};
  for (const text of [raw, Buffer.from(raw, 'base64').toString('utf8')]) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Not this encoding; try the next.
    }
  }
  throw new BrowserLaunchError('the launch parameter of BROWSERLESS_URL is not a JSON object', false);
}

/** Options of the device's own browser context: the egress proxy, loopback included. */
export function deviceContextOptions(egress: EgressGate | null): { proxyServer?: string; proxyBypassList?: string[] } {
  return egress === null ? {} : { proxyServer: egress.url, proxyBypassList: [LOOPBACK_THROUGH_PROXY] };
}

/**
 * Whether browsers behind the endpoint run on this machine and so can use the egress
 * proxy, which listens on loopback only.
 */
export function isLocalEndpoint(endpoint: string): boolean {
  if (!URL.canParse(endpoint)) return false;
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}

/** A DevTools browser URL names one running browser, shared by whoever connects. */
export function isSharedBrowserEndpoint(endpoint: URL): boolean {
  return endpoint.pathname.startsWith('/devtools/browser/');
}

/** A route on the endpoint's HTTP side, keeping its token: ws://h:3000?token=t → http://h:3000/<route>?token=t. */
export function httpUrl(endpoint: string | URL, pathname: string): string {
  const url = new URL(endpoint);
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  url.pathname = pathname;
  const token = url.searchParams.get('token');
  url.search = '';
  if (token !== null) url.searchParams.set('token', token);
  return url.toString();
}

/** browserless 2.x's GET /pressure, the part read here. */
const PressureSchema = z.object({
  pressure: z.object({
    /** -1 (or Infinity, which JSON renders as null) means no limit. */
    maxConcurrent: z.number().nullable(),
    running: z.number(),
    queued: z.number(),
  }),
});

/** How many browsers the pool may run at once, and how many it runs or holds queued now. */
export interface RemoteCapacity {
  /** null: the pool sets no limit. */
  maxConcurrent: number | null;
  inUse: number;
}

/**
 * Asks a browserless endpoint how busy its pool is (GET /pressure with the token), in
 * at most `timeoutMs`. Null when the endpoint does not answer that question in time
 * (not browserless 2.x, unreachable, refused): the caller then relies on the bounded
 * connect alone. CPU and memory pressure are not read: browserless refuses on them
 * only when its health checks are on, and then says so with a 429 at connect.
 */
export async function readRemoteCapacity(endpoint: URL, timeoutMs: number): Promise<RemoteCapacity | null> {
  try {
    const response = await fetch(httpUrl(endpoint, '/pressure'), {
      headers: { Accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    const parsed = PressureSchema.safeParse(await response.json());
    if (!parsed.success) return null;
    const { maxConcurrent, running, queued } = parsed.data.pressure;
    return { maxConcurrent: maxConcurrent !== null && maxConcurrent > 0 ? maxConcurrent : null, inUse: running + queued };
  } catch {
    return null;
  }
}
