import { loadCdpSessionForCaller } from '../../domain/cdp/cdp-session-resource';
import { recordingEntryPoint } from '../recording-route';

/**
 * GET /v1/cdp_sessions/{id}/recording: the video of what the device's page showed while
 * the CDP connection was open; the scope and tenancy of a live-view session's recording.
 */
export const getCdpSessionRecording = recordingEntryPoint({
  path: '/cdp_sessions/{id}/recording',
  scopes: ['operator:sessions:write'],
  subject: 'cdp_session',
  load: (services, principal, id) => loadCdpSessionForCaller(services.db, principal, id, false),
  openapi: {
    operationId: 'getCdpSessionRecording',
    summary: "Download the video of what a CDP session's connection showed (MP4, H.264)",
    description:
      "The device's page from the connection's opening to its end (close, DELETE, expiry, key revocation, the device's end, or the service's stop). 404 recording_not_found until the connection ended and its video was stored, and for a session never connected.",
    tags: ['cdp'],
    idPrefix: 'cdp',
    notFound: 'cdp_session_not_found',
  },
});
