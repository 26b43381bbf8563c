import http from 'node:http';
import https from 'node:https';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import { checkDestination, type ResolvedAddress, type Resolver } from '../../net/destination';

/**
 * The transport classes an endpoint's `last_error` may show (CONTRACT.md), plus `http_<status>`
 * for a non-2xx answer. Never a response body or an error message: those are the receiver's
 * data and may carry anything.
 */
export type DeliveryError =
  | `http_${number}`
  | 'timeout'
  | 'connection_refused'
  | 'dns_failure'
  | 'tls_error'
  | 'redirect'
  | 'blocked_destination';

export type DeliveryResult = { ok: true; status: number } | { ok: false; lastError: DeliveryError };

export interface DeliverOptions {
  url: string;
  /** The exact bytes that were signed. */
  body: string;
  /** Signature, event and delivery headers; content type and length are set here. */
  headers: Record<string, string>;
  /** One budget for resolution, connection and response headers. */
  timeoutMs?: number;
  allowPrivate: boolean;
  resolve?: Resolver;
}

// Transport failures that happen before any byte reached the receiver's application. Anything
// not listed, and not a TLS failure, is also reported as `connection_refused`: the contract's
// closed list has no generic network class, and "could not reach the receiver" is the truth.
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT']);
// OpenSSL's certificate verification codes as Node reports them (see tls docs).
const CERT_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function isTlsCode(code: string): boolean {
  // EPROTO is what OpenSSL's handshake failures (wrong version, alert) surface as.
  return (
    CERT_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO'
  );
}

interface TransportPhase {
  https: boolean;
  tcpConnected: boolean;
  tlsEstablished: boolean;
}

function classifyTransportError(error: unknown, phase: TransportPhase): DeliveryError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (DNS_CODES.has(code)) return 'dns_failure';
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  if (phase.https && isTlsCode(code)) return 'tls_error';
  // A reset or hang-up during the handshake is how many servers reject a TLS client.
  if (phase.https && phase.tcpConnected && !phase.tlsEstablished) return 'tls_error';
  return 'connection_refused';
}

function classifyStatus(status: number): DeliveryResult {
  if (status >= 200 && status < 300) return { ok: true, status };
  // A redirect is a failure and is never followed: it would resend the signed body to a host
  // that was never checked.
  if (status >= 300 && status < 400) return { ok: false, lastError: 'redirect' };
  return { ok: false, lastError: `http_${status}` };
}

/**
 * A `lookup` for node:http that answers with the addresses the destination check approved,
 * so the socket connects to what was checked and never to a fresh DNS answer. Node asks for
 * `all` when it races address families (happy eyeballs); every approved address is safe.
 */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    const family = options.family;
    const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
    const candidates = wanted === 0 ? addresses : addresses.filter((a) => a.family === wanted);
    const first = candidates[0];
    if (first === undefined) {
      const error: NodeJS.ErrnoException = new Error(`no approved address for ${hostname}`);
      error.code = 'ENOTFOUND';
      callback(error, '', 0);
      return;
    }
    if (options.all === true) {
      const all: LookupAddress[] = candidates.map(({ address, family }) => ({ address, family }));
      callback(null, all);
    } else {
      callback(null, first.address, first.family);
    }
  };
}

function post(
  url: URL,
  addresses: ResolvedAddress[],
  options: DeliverOptions,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  return new Promise<DeliveryResult>((resolve) => {
    const phase: TransportPhase = {
      https: url.protocol === 'https:',
      tcpConnected: false,
      tlsEstablished: false,
    };
    const transport = phase.https ? https : http;
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: {
          ...options.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(options.body)),
        },
        lookup: pinnedLookup(addresses),
        // A pooled socket could outlive the check it was opened under; every delivery dials.
        agent: false,
        signal,
      },
      (response) => {
        // The body is the receiver's business: never read, never stored.
        response.destroy();
        resolve(classifyStatus(response.statusCode ?? 0));
      },
    );
    request.on('socket', (socket: Socket) => {
      socket.once('connect', () => (phase.tcpConnected = true));
      socket.once('secureConnect', () => (phase.tlsEstablished = true));
    });
    request.on('error', (error) => {
      // Aborting on the deadline surfaces as an AbortError; the deadline is the real cause.
      const lastError = signal.aborted ? 'timeout' : classifyTransportError(error, phase);
      resolve({ ok: false, lastError });
    });
    request.end(options.body);
  });
}

const TIMED_OUT = Symbol('timed out');

function whenAborted(signal: AbortSignal): Promise<typeof TIMED_OUT> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(TIMED_OUT), { once: true }));
}

/**
 * One delivery attempt: check the destination (resolving DNS now, not at endpoint creation),
 * then POST to the approved addresses only. Resolves, never rejects; the result is what the
 * worker records as the attempt's outcome and `last_error`.
 */
export async function deliverWebhook(options: DeliverOptions): Promise<DeliveryResult> {
  const { timeoutMs = 10_000 } = options;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    const { allowPrivate, resolve } = options;
    const check = await Promise.race([
      checkDestination(options.url, { allowPrivate, resolve }),
      whenAborted(deadline.signal),
    ]);
    if (check === TIMED_OUT) return { ok: false, lastError: 'timeout' };
    if (!check.ok) {
      return { ok: false, lastError: check.reason === 'dns_failure' ? 'dns_failure' : 'blocked_destination' };
    }
    return await post(check.url, check.addresses, options, deadline.signal);
  } finally {
    clearTimeout(timer);
  }
}
