import { ApiError } from '../../core/errors';
import { latestReadyRecording } from '../../domain/recordings/recording-rows';
import { loadSessionForCaller } from '../../domain/sessions/session-resource';
import { authorizeRequest } from '../../http/authorize';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import { sendObject } from '../../http/send-object';
import type { Services } from '../../services/services';
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
        const recording = await latestReadyRecording(services.db, 'session', session.id);
        if (recording === null || recording.sizeBytes === null) throw new ApiError('recording_not_found');
        const sent = await sendObject(services.store, req, res, { key: recording.objectKey, size: recording.sizeBytes, contentType: recording.contentType });
        if (!sent) throw new ApiError('recording_not_found');
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
