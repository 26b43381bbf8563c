import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Db } from '../../db/client';
import { ApiError } from '../core/errors';
import type { Config } from '../core/config';
import { authenticateAnswerAccess } from '../domain/answer-links/answer-link-access';
import { openCdpSessionBySecret } from '../domain/cdp/cdp-connection';
import type { CdpSessionRow } from '../domain/cdp/cdp-session-resource';
import { signedInOperator } from '../domain/console/console-sessions';
import type { Operator } from '../domain/console/operator-accounts';
import { operatorPrincipal } from '../domain/console/operator-principal';
import type { EscalationRow } from '../domain/escalations/escalation-resource';
import { authenticateEscalationBearer } from '../domain/escalations/resolve-escalation';
import type { Authenticator } from '../domain/keys/authenticate';
import type { Principal } from '../domain/keys/principal';
import type { Scope } from '../domain/keys/scopes';
import { authenticateAccessToken } from '../domain/mcp-oauth/access-token';
import { isAccessToken } from '../domain/mcp-oauth/oauth-secrets';
import { mcpResourceUrl } from '../domain/mcp-oauth/oauth-urls';
import { openLiveViewSession } from '../domain/sessions/live-view-session';
import type { SessionRow } from '../domain/sessions/session-resource';
import { offeredSessionToken } from '../domain/sessions/session-token';
import type { RateLimiter } from '../domain/rate-limit/rate-limiter';
import { hashSecret, secretMatches } from '../domain/secret-hash';
import type { AuthFailureThrottle } from '../domain/rate-limit/auth-failure-throttle';
import { CONSOLE_COOKIE, readCookie } from './cookies';

/** The header an opened answer link's page sends its access token in: never a URL, so never a log line. */
export const ANSWER_ACCESS_HEADER = 'x-svc-answer-access';
/**
 * Every console call carries this header. A page on another site can make a browser send
 * the cookie (a form post, an image), but not a custom header without a CORS preflight,
 * which this server never grants: that is the console's CSRF defence, with SameSite.
 */
export const CONSOLE_HEADER = 'x-svc-console';
/** The organization an operator acts on when the console calls a /v1 operation (whose input, /v1's, names none). */
export const OPERATOR_ORG_HEADER = 'x-svc-org';
/**
 * Fetch metadata values (Sec-Fetch-Site) of the console's own pages' requests for bytes:
 * an <img> or <video> of a console page (`same-origin`), a screenshot opened in a new tab
 * or typed in (`none`). Browsers without fetch metadata send none. Such loads cannot send
 * CONSOLE_HEADER, and change nothing; a sibling site's page (`same-site`) could make the
 * browser send the SameSite=Strict cookie, so it is refused.
 */
const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Who is calling, whatever credential they presented: one tagged union over the kinds of
 * caller of the HTTP entrances. A key's rights (`principal`) are what domain operations
 * take; the other kinds name what their credential opens.
 */
export type Caller =
  | { kind: 'anyone' }
  | { kind: 'api_key'; principal: Principal }
  | { kind: 'mcp_access_token'; principal: Principal }
  | { kind: 'operator'; operator: Operator; /** The operator as the domain sees them acting on the organization OPERATOR_ORG_HEADER names; null if none. */ principal: Principal | null }
  | { kind: 'answer_link'; escalation: EscalationRow }
  | { kind: 'escalation_bearer'; escalation: EscalationRow }
  | { kind: 'cdp_secret'; session: CdpSessionRow; secret: string }
  | { kind: 'session_token'; session: SessionRow }
  | { kind: 'metrics_token' };

/**
 * Which callers an entry point accepts, declared beside its path. `api_key`: one of
 * `scopes` (null: any key), and the organization's product entitlement when `write`;
 * `mcp_bearer`: an API key or an MCP OAuth access token; `operator`: the console's sign-in
 * cookie, behind the console's CSRF defence of calls (`console_api`: CONSOLE_HEADER) or
 * of page loads of bytes (`console_page`: fetch metadata); `cdp_secret`: a CDP session's
 * `token` query parameter; `session_token`: a live-view session's token, offered as a
 * WebSocket subprotocol.
 */
export type CallerRule =
  | { kind: 'anyone' }
  | { kind: 'api_key'; scopes: readonly Scope[] | null; write?: boolean }
  | { kind: 'mcp_bearer' }
  | { kind: 'operator'; from: 'console_api' | 'console_page' }
  | { kind: 'answer_link' }
  | { kind: 'escalation_bearer' }
  | { kind: 'cdp_secret' }
  | { kind: 'session_token' }
  | { kind: 'metrics_token' };

type KeyCaller = Extract<Caller, { kind: 'api_key' | 'mcp_access_token' }>;
/** The caller each kind of rule resolves to. */
export type CallerOf = { [K in CallerRule['kind']]: K extends 'api_key' | 'mcp_bearer' ? KeyCaller : Extract<Caller, { kind: K }> };

/** What resolving needs; the service's Services carries it. */
export interface CallerSources {
  db: Db;
  config: Pick<Config, 'metricsToken'> & { http: Pick<Config['http'], 'publicUrl'> };
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  authThrottle: AuthFailureThrottle;
}

export interface CallerRequest {
  /** The id the credential must open (an escalation's, a CDP session's), from the path or the input. */
  subject?: string;
  /** Who /mcp already authenticated, for the procedures its tools call: then a key's checks start at the rate limit. */
  authenticated?: Principal;
}

/**
 * The one check at every HTTP entrance, in CONTRACT.md's order: the credential the rule
 * accepts is authenticated under the failed-authentication throttle (401, or 429 for an
 * address that failed too often), then for keys the rate limit (429), the scope (403) and
 * on writes the entitlement (403).
 */
export async function resolveCaller<R extends CallerRule>(sources: CallerSources, req: IncomingMessage, res: ServerResponse, rule: R, request: CallerRequest = {}): Promise<CallerOf[R['kind']]> {
  return (await resolve(sources, req, res, rule, request)) as CallerOf[R['kind']];
}

async function resolve(sources: CallerSources, req: IncomingMessage, res: ServerResponse, rule: CallerRule, { subject = '', authenticated }: CallerRequest): Promise<Caller> {
  const throttled = <T>(check: () => Promise<T>) => sources.authThrottle.check(req, check);
  switch (rule.kind) {
    case 'anyone':
      return { kind: 'anyone' };
    case 'api_key':
    case 'mcp_bearer': {
      const caller = authenticated !== undefined ? keyCaller(authenticated) : await throttled(() => authenticateKey(sources, bearerOf(req), rule.kind === 'mcp_bearer'));
      await sources.rateLimiter.consume(caller.principal.keyId, res);
      if (rule.kind === 'api_key') {
        if (rule.scopes !== null && !rule.scopes.some((scope) => caller.principal.scopes.has(scope))) throw new ApiError('insufficient_scope');
        if (rule.write === true && !caller.principal.entitled) throw new ApiError('product_not_entitled');
      }
      return caller;
    }
    case 'operator': {
      // The console's CSRF defence, before the cookie is looked at (the entrance refused a blocked address already).
      const site = req.headers['sec-fetch-site'];
      if (rule.from === 'console_api' ? req.headers[CONSOLE_HEADER] !== '1' : site !== undefined && !ALLOWED_FETCH_SITES.has(site)) throw new ApiError('console_header_required');
      const operator = await signedInOperator(sources.db, readCookie(req, CONSOLE_COOKIE));
      const org = req.headers[OPERATOR_ORG_HEADER];
      return { kind: 'operator', operator, principal: typeof org === 'string' && UUID.test(org) ? operatorPrincipal(org, operator.name) : null };
    }
    case 'answer_link': {
      const header = req.headers[ANSWER_ACCESS_HEADER];
      const token = typeof header === 'string' ? header : null;
      return { kind: 'answer_link', escalation: await throttled(() => authenticateAnswerAccess(sources.db, subject, token)) };
    }
    case 'escalation_bearer':
      return { kind: 'escalation_bearer', escalation: await throttled(() => authenticateEscalationBearer(sources.db, subject, bearerOf(req))) };
    case 'cdp_secret':
    case 'session_token':
      return resolveUpgradeCaller(sources, req, rule, subject);
    case 'metrics_token': {
      const token = sources.config.metricsToken;
      await throttled(async () => {
        const bearer = bearerOf(req);
        if (token === null || bearer === null || !secretMatches(bearer, hashSecret(token))) {
          res.setHeader('WWW-Authenticate', 'Bearer');
          throw new ApiError('invalid_metrics_token');
        }
      });
      return { kind: 'metrics_token' };
    }
  }
}

/** The callers of the WebSocket upgrades (assembly/entry-points.ts), which have no response to write headers to. */
export type UpgradeCallerRule = Extract<CallerRule, { kind: 'cdp_secret' | 'session_token' }>;

/** resolveCaller for a handshake: the session a CDP secret or a live-view token opens, `subject` naming it. */
export async function resolveUpgradeCaller<K extends UpgradeCallerRule['kind']>(sources: Pick<CallerSources, 'db' | 'authThrottle'>, req: IncomingMessage, rule: { kind: K }, subject: string): Promise<CallerOf[K]> {
  return (await sources.authThrottle.check(req, async (): Promise<Caller> => {
    if (rule.kind === 'session_token') {
      const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((value) => value.trim());
      return { kind: 'session_token', session: await openLiveViewSession(sources.db, subject, offeredSessionToken(offered)) };
    }
    const secret = new URL(req.url ?? '', 'http://localhost').searchParams.get('token');
    // Only a secret that matched gets past openCdpSessionBySecret.
    return { kind: 'cdp_secret', session: await openCdpSessionBySecret(sources.db, subject, secret), secret: secret! };
  })) as CallerOf[K];
}

/**
 * The credential of `Authorization: Bearer <credential>`, or null: the one place a Bearer
 * header is read (API keys, MCP access tokens, escalation bearers, the metrics token, the
 * access log's key id). Which kind it is, and whether it is good, is resolveCaller's.
 */
export function bearerOf(req: IncomingMessage): string | null {
  return /^Bearer (\S+)$/.exec(req.headers.authorization?.trim() ?? '')?.[1] ?? null;
}

function keyCaller(principal: Principal): KeyCaller {
  return { kind: principal.oauthGrantId === undefined ? 'api_key' : 'mcp_access_token', principal };
}

/** An API key, or where /mcp allows it an access token of the service's OAuth authorization server. */
async function authenticateKey(sources: CallerSources, bearer: string | null, orAccessToken: boolean): Promise<KeyCaller> {
  if (orAccessToken && bearer !== null && isAccessToken(bearer)) {
    return { kind: 'mcp_access_token', principal: await authenticateAccessToken(sources.db, mcpResourceUrl(sources.config.http.publicUrl), bearer) };
  }
  return { kind: 'api_key', principal: await sources.authenticator.authenticate(bearer) };
}
