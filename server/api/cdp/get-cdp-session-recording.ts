import { loadCdpSessionForCaller } from '../../domain/cdp/cdp-session-resource';
import { rawEntryPoint } from '../entry-point';
import { recordingOperation } from '../recording-openapi';
import { sendLatestRecording } from '../send-recording';

/**
 * GET /v1/cdp_sessions/{id}/recording: the video of what the device's page showed while
 * the CDP connection was open (MP4), with `Range`; the scope and tenancy of a live-view
 * session's recording (GET /v1/sessions/{id}/recording).
 */
export const getCdpSessionRecording = rawEntryPoint({
  method: 'GET',
  path: '/cdp_sessions/{id}/recording',
  caller: { kind: 'api_key', scopes: ['operator:sessions:write'] },
  openapi: recordingOperation({
    operationId: 'getCdpSessionRecording',
    summary: "Download the video of what a CDP session's connection showed (MP4, H.264)",
    description:
      "The device's page from the connection's opening to its end (close, DELETE, expiry, key revocation, the device's end, or the service's stop). 404 recording_not_found until the connection ended and its video was stored, and for a session never connected.",
    tags: ['cdp'],
    idPrefix: 'cdp',
    notFound: 'cdp_session_not_found',
  }),
  async handle({ req, res, params, caller, services }) {
    const cdpSession = await loadCdpSessionForCaller(services.db, caller.principal, params.id!, false);
    await sendLatestRecording(services, req, res, 'cdp_session', cdpSession.id);
  },
});
