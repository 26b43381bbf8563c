import { loadSessionForCaller } from '../../domain/sessions/session-resource';
import { authorizeRequest } from '../../http/authorize';
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
        const principal = await authorizeRequest(services, req, res, ['operator:sessions:write']);
        const session = await loadSessionForCaller(services.db, principal, decodePathSegment(params[0]!));
        await sendLatestRecording(services, req, res, 'session', session.id);
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
