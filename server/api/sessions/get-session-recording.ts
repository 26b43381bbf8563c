import { loadSessionForCaller } from '../../domain/sessions/session-resource';
import { resolveCaller } from '../../http/resolve-caller';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import type { Services } from '../../services/services';
import { sendLatestRecording } from '../send-recording';
import { sendErrorResponse } from '../../trpc/send-error';

/**
 * GET /v1/sessions/{id}/recording: the video of the session's latest watched stretch
 * (MP4), with `Range`; the same scope as GET /v1/sessions/{id}.
 */
export function sessionRecordingRoute(services: Services): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/sessions\/([^/]+)\/recording\/?$/,
    template: '/sessions/{id}/recording',
    async handle(req, res, { requestId, params }) {
      try {
        const principal = (await resolveCaller(services, req, res, { kind: 'api_key', scopes: ['operator:sessions:write'] })).principal;
        const session = await loadSessionForCaller(services.db, principal, decodePathSegment(params[0]!));
        await sendLatestRecording(services, req, res, 'session', session.id);
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
