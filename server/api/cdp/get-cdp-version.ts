import { cdpUrl } from '../../domain/cdp/cdp-session-resource';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import { resolveCaller } from '../../http/resolve-caller';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';

/**
 * GET /v1/cdp_sessions/{id}/devtools/json/version?token=…: the DevTools HTTP endpoint's
 * one answer clients need, for those that start from an http URL (Puppeteer 25's
 * `browserURL`, chrome-devtools-mcp's `--browserUrl`): given `cdp_url` with `ws` → `http`,
 * they append `/json/version` to its path, keep its query, and connect to the
 * `webSocketDebuggerUrl` it answers, which is `cdp_url` itself. The secret is checked
 * (without being used: the socket uses it) under the failed-authentication throttle, as
 * at the handshake; a refusal never repeats it. `/json/list` and the rest of Chrome's HTTP
 * endpoint are not served (docs/api.md, "Client compatibility").
 */
export function cdpVersionRoute(services: Services): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/cdp_sessions\/([^/]+)\/devtools\/json\/version\/?$/,
    template: '/cdp_sessions/{id}/devtools/json/version',
    async handle(req, res, { requestId, params }) {
      try {
        const { session, secret } = await resolveCaller(services, req, res, { kind: 'cdp_secret' }, { subject: decodePathSegment(params[0]!) });
        // Only a secret that matched gets here, so the answer repeats what its caller sent.
        const version = { 'Protocol-Version': '1.3', webSocketDebuggerUrl: cdpUrl(services.config.http.publicUrl, session.id, secret) };
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
        res.end(JSON.stringify(version));
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
