import { loadCdpSessionForCaller } from '../../domain/cdp/cdp-session-resource';
import { resolveCaller } from '../../http/resolve-caller';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import type { Services } from '../../services/services';
import { sendLatestRecording } from '../send-recording';
import { sendErrorResponse } from '../../trpc/send-error';

/**
 * GET /v1/cdp_sessions/{id}/recording: the video of what the device's page showed while
 * the CDP connection was open (MP4), with `Range`; the scope and tenancy of a live-view
 * session's recording (GET /v1/sessions/{id}/recording).
 */
export function cdpSessionRecordingRoute(services: Services): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/cdp_sessions\/([^/]+)\/recording\/?$/,
    template: '/cdp_sessions/{id}/recording',
    async handle(req, res, { requestId, params }) {
      try {
        const principal = (await resolveCaller(services, req, res, { kind: 'api_key', scopes: ['operator:sessions:write'] })).principal;
        const cdpSession = await loadCdpSessionForCaller(services.db, principal, decodePathSegment(params[0]!), false);
        await sendLatestRecording(services, req, res, 'cdp_session', cdpSession.id);
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
