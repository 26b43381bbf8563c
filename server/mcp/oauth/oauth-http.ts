import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthError } from '../../domain/mcp-oauth/oauth-error';
import type { ClientCredentials } from '../../domain/mcp-oauth/oauth-client';
import { readBody } from '../../http/read-body';

// What the OAuth endpoints share: their JSON answers (never cached, RFC 6749 §5.1), their
// error bodies (RFC 6749 §5.2, with the request id as an extension member so a person can
// quote it), form bodies, client credentials, and CORS for browser-based MCP clients (no
// cookie is read on these endpoints, so any origin may call them).

export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, MCP-Protocol-Version',
  'Access-Control-Max-Age': '600',
};

export function sendOAuthJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...CORS_HEADERS, 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Pragma: 'no-cache', ...headers });
  res.end(JSON.stringify(body));
}

export function sendOAuthError(res: ServerResponse, requestId: string, error: OAuthError, headers: Record<string, string> = {}): void {
  const challenge: Record<string, string> = error.status === 401 ? { 'WWW-Authenticate': 'Basic realm="mcp-oauth"' } : {};
  const retry: Record<string, string> = error.status === 429 ? { 'Retry-After': '3600' } : {};
  sendOAuthJson(res, error.status, { error: error.code, error_description: error.message, request_id: requestId }, { ...challenge, ...retry, ...headers });
}

/** An application/x-www-form-urlencoded body (the token, revocation and consent endpoints), parameters never repeated. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  const body = await readBody(req);
  if (body === null) throw new OAuthError('invalid_request', 'The body is larger than 1 MiB.');
  const form = new URLSearchParams(body.toString('utf8'));
  const names = [...form.keys()];
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) throw new OAuthError('invalid_request', `${repeated.slice(0, 50)} is repeated.`);
  return form;
}

/** RFC 6749 §2.3.1: the client's id and secret from HTTP Basic, or else from the body. */
export function clientCredentials(req: IncomingMessage, form: URLSearchParams): ClientCredentials {
  const basic = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization?.trim() ?? '');
  if (basic !== null) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'The Basic credentials are malformed.');
    return { clientId: decodeURIComponent(decoded.slice(0, colon)), clientSecret: decodeURIComponent(decoded.slice(colon + 1)) };
  }
  return { clientId: form.get('client_id'), clientSecret: form.get('client_secret') };
}
