import { cdpUrl } from '../../domain/cdp/cdp-session-resource';
import { SOCKET_PATHS } from '../../domain/socket-paths';
import { rawEntryPoint } from '../entry-point';

/**
 * GET /v1/cdp_sessions/{id}/devtools/json/version?token=…: the DevTools HTTP endpoint's
 * one answer clients need, for those that start from an http URL (Puppeteer 25's
 * `browserURL`, chrome-devtools-mcp's `--browserUrl`): given `cdp_url` with `ws` → `http`,
 * they append `/json/version` to its path, keep its query, and connect to the
 * `webSocketDebuggerUrl` it answers, which is `cdp_url` itself. The secret is checked
 * (without being used: the socket uses it) under the failed-authentication throttle, as
 * at the handshake; a refusal never repeats it. `/json/list` and the rest of Chrome's HTTP
 * endpoint are not served, nor documented in /v1/openapi.json (docs/api.md, "Client compatibility").
 */
export const getCdpVersion = rawEntryPoint({
  method: 'GET',
  // The CDP socket's own path, under /v1.
  path: `${SOCKET_PATHS.cdp.slice('/v1'.length)}/json/version`,
  caller: { kind: 'cdp_secret' },
  subject: 'id',
  async handle({ res, caller, services }) {
    // Only a secret that matched gets here, so the answer repeats what its caller sent.
    const version = { 'Protocol-Version': '1.3', webSocketDebuggerUrl: cdpUrl(services.config.http.publicUrl, caller.session.id, caller.secret) };
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(version));
  },
});
