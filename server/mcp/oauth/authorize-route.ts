import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../core/errors';
import { approveGrant } from '../../domain/mcp-oauth/approve-grant';
import { checkAuthorizationRequest, redirectWith } from '../../domain/mcp-oauth/authorization-request';
import { OAuthError } from '../../domain/mcp-oauth/oauth-error';
import { OAUTH_PATHS } from '../../domain/mcp-oauth/oauth-urls';
import type { Services } from '../../services/services';
import { readCookie, setCookie } from '../../http/cookies';
import { consentPage, refusalPage } from './consent-page';
import { readForm } from './oauth-http';

const CSRF_COOKIE = 'mcp_oauth_csrf';

// No script may run on the page and no other site may frame it (clickjacking). No
// form-action: browsers apply it to the redirect that follows the form, which goes to the
// client's redirect URI on another origin.
const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/**
 * /oauth/authorize: GET shows the consent page for a checked authorization request; POST
 * is the person's answer (approve with an API key, or deny). The form is CSRF-safe by a
 * double-submitted token: a random value in a SameSite=Strict, HttpOnly cookie that the
 * page also carries in a hidden field; a POST whose field and cookie differ is refused.
 */
export async function handleAuthorize(services: Services, req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
  const publicUrl = services.config.http.publicUrl;
  if (req.method === 'GET') {
    const params = new URL(req.url ?? '/', 'http://x').searchParams;
    const check = await checkAuthorizationRequest(services.db, publicUrl, params);
    if (!check.ok) return refuse(res, publicUrl, check);
    const csrf = randomBytes(32).toString('base64url');
    setCookie(res, publicUrl, CSRF_COOKIE, csrf, { path: OAUTH_PATHS.authorize });
    return sendPage(res, 200, consentPage(check.request, csrf, null));
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { ...PAGE_HEADERS, Allow: 'GET, POST' });
    res.end(refusalPage('Open this page from your MCP client.'));
    return;
  }

  let form: URLSearchParams;
  try {
    form = await readForm(req);
  } catch (error) {
    if (error instanceof OAuthError) return sendPage(res, 400, refusalPage(error.message));
    throw error;
  }
  const csrf = form.get('csrf_token') ?? '';
  if (!sameToken(csrf, readCookie(req, CSRF_COOKIE) ?? '')) {
    return sendPage(res, 403, refusalPage('This form expired or was not sent from this page. Go back to your MCP client and connect again.'));
  }
  const check = await checkAuthorizationRequest(services.db, publicUrl, form);
  if (!check.ok) return refuse(res, publicUrl, check);
  const request = check.request;
  if (form.get('decision') !== 'approve') {
    return redirect(res, redirectWith(request.redirectUri, { error: 'access_denied', error_description: 'The person denied the request.', state: request.state, iss: publicUrl }));
  }

  const again = (status: number, message: string) => sendPage(res, status, consentPage(request, csrf, message));
  const apiKey = (form.get('api_key') ?? '').trim();
  let principal;
  try {
    principal = await services.authThrottle.check(req, () => services.authenticator.authenticate(apiKey));
  } catch (error) {
    if (error instanceof ApiError && error.apiCode === 'invalid_api_key') return again(401, 'That API key is not valid: it is mistyped, unknown or revoked.');
    if (error instanceof ApiError && error.apiCode === 'rate_limited') return again(429, 'Too many wrong keys from this address; wait a while before trying again.');
    throw error;
  }
  const approved = await approveGrant(services.db, request, principal, requestId);
  if (approved === null) return again(403, 'This key holds none of the scopes the client asks for; use a key that does.');
  return redirect(res, redirectWith(request.redirectUri, { code: approved.code, state: request.state, iss: publicUrl }));
}

function refuse(res: ServerResponse, publicUrl: string, check: { error: OAuthError; redirectUri: string | null; state: string | null }): void {
  if (check.redirectUri === null) return sendPage(res, 400, refusalPage(check.error.message));
  redirect(res, redirectWith(check.redirectUri, { error: check.error.code, error_description: check.error.message, state: check.state, iss: publicUrl }));
}

function sendPage(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, PAGE_HEADERS);
  res.end(html);
}

/** 303: the browser follows with a GET, the form's body left behind. */
function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
  res.end();
}

function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length > 0 && left.length === right.length && timingSafeEqual(left, right);
}
