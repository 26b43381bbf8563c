import { loadSessionForCaller } from '../../domain/sessions/session-resource';
import { recordingEntryPoint } from '../recording-route';

/** GET /v1/sessions/{id}/recording: the video of the session's latest watched stretch; the same scope as GET /v1/sessions/{id}. */
export const getSessionRecording = recordingEntryPoint({
  path: '/sessions/{id}/recording',
  scopes: ['operator:sessions:write'],
  subject: 'session',
  load: (services, principal, id) => loadSessionForCaller(services.db, principal, id),
  openapi: {
    operationId: 'getSessionRecording',
    summary: 'Download the video of what a live-view session watched (MP4, H.264)',
    description: '404 recording_not_found until a socket of the session was open and closed again; the latest watched stretch.',
    tags: ['sessions'],
    idPrefix: 'ses',
    notFound: 'session_not_found',
  },
});
