import { ApiError } from '../../core/errors';
import { loadCdpSessionForCaller } from '../../domain/cdp/cdp-session-resource';
import { latestReadyRecording } from '../../domain/recordings/recording-rows';
import { authorizeRequest } from '../../http/authorize';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import { sendObject } from '../../http/send-object';
import type { Services } from '../../services/services';
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
        const principal = await authorizeRequest(services, req, res, ['operator:sessions:write']);
        const cdpSession = await loadCdpSessionForCaller(services.db, principal, decodePathSegment(params[0]!), false);
        const recording = await latestReadyRecording(services.db, 'cdp_session', cdpSession.id);
        if (recording === null || recording.sizeBytes === null) throw new ApiError('recording_not_found');
        const sent = await sendObject(services.store, req, res, { key: recording.objectKey, size: recording.sizeBytes, contentType: recording.contentType });
        if (!sent) throw new ApiError('recording_not_found');
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
