import { loadSessionForCaller } from '../../domain/sessions/session-resource';
import { rawEntryPoint } from '../entry-point';
import { recordingOperation } from '../recording-openapi';
import { sendLatestRecording } from '../send-recording';

/**
 * GET /v1/sessions/{id}/recording: the video of the session's latest watched stretch
 * (MP4), with `Range`; the same scope as GET /v1/sessions/{id}.
 */
export const getSessionRecording = rawEntryPoint({
  method: 'GET',
  path: '/sessions/{id}/recording',
  caller: { kind: 'api_key', scopes: ['operator:sessions:write'] },
  openapi: recordingOperation({
    operationId: 'getSessionRecording',
    summary: 'Download the video of what a live-view session watched (MP4, H.264)',
    description: '404 recording_not_found until a socket of the session was open and closed again; the latest watched stretch.',
    tags: ['sessions'],
    idPrefix: 'ses',
    notFound: 'session_not_found',
  }),
  async handle({ req, res, params, caller, services }) {
    const session = await loadSessionForCaller(services.db, caller.principal, params.id!);
    await sendLatestRecording(services, req, res, 'session', session.id);
  },
});
