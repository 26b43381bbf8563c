// The recordings, step screenshots and downloaded files are served outside tRPC (their
// bodies are bytes), so their entries in the OpenAPI document are written by hand, here,
// beside the generated rest (openapi.ts).

import type { ApiErrorCode } from '../core/errors';

type ErrorResponses = (codes: readonly ApiErrorCode[], withRateLimitHeaders: boolean) => Record<string, unknown>;

const NOT_FOUND_RECORDING: ApiErrorCode[] = ['recording_not_found'];

/** What every byte route can answer besides its own not-found code. */
const BYTE_ROUTE_ERRORS: ApiErrorCode[] = ['invalid_api_key', 'insufficient_scope', 'rate_limited', 'range_not_satisfiable', 'internal_error', 'service_unavailable'];

const rangeHeader = {
  name: 'Range',
  in: 'header',
  required: false,
  description: 'One byte range, `bytes=<first>-[<last>]` or `bytes=-<suffix length>`; past the end: 416 range_not_satisfiable. Several ranges are answered whole (200).',
  schema: { type: 'string' },
};

const partialResponses = (errorResponses: ErrorResponses, notFound: ApiErrorCode[], contentType: string, what: string) => ({
  '200': {
    description: `${what}, whole. Accept-Ranges: bytes.`,
    content: { [contentType]: { schema: { type: 'string', format: 'binary' } } },
  },
  '206': {
    description: `One range of ${what}, with Content-Range.`,
    content: { [contentType]: { schema: { type: 'string', format: 'binary' } } },
  },
  ...errorResponses([...BYTE_ROUTE_ERRORS, ...notFound], true),
});

const idParameter = (prefix: string) => ({ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: `^${prefix}_` } });

/** The byte routes' entries in the OpenAPI document, with the same error responses as generated routes. */
export const artifactOpenApiPaths = (errorResponses: ErrorResponses) => ({
  '/tasks/{id}/recording': {
    get: {
      operationId: 'getTaskRecording',
      summary: "Download the video of a task's latest run (MP4, H.264)",
      description: '404 recording_not_found until a run of the task finished recording (the recording is stored before the task ends).',
      tags: ['tasks'],
      security: [{ bearerAuth: [] }],
      parameters: [idParameter('task'), rangeHeader],
      responses: partialResponses(errorResponses, ['task_not_found', ...NOT_FOUND_RECORDING], 'video/mp4', 'the recording'),
    },
  },
  '/sessions/{id}/recording': {
    get: {
      operationId: 'getSessionRecording',
      summary: 'Download the video of what a live-view session watched (MP4, H.264)',
      description: '404 recording_not_found until a socket of the session was open and closed again; the latest watched stretch.',
      tags: ['sessions'],
      security: [{ bearerAuth: [] }],
      parameters: [idParameter('ses'), rangeHeader],
      responses: partialResponses(errorResponses, ['session_not_found', ...NOT_FOUND_RECORDING], 'video/mp4', 'the recording'),
    },
  },
  '/cdp_sessions/{id}/recording': {
    get: {
      operationId: 'getCdpSessionRecording',
      summary: "Download the video of what a CDP session's connection showed (MP4, H.264)",
      description:
        "The device's page from the connection's opening to its end (close, DELETE, expiry, key revocation, the device's end, or the service's stop). 404 recording_not_found until the connection ended and its video was stored, and for a session never connected.",
      tags: ['cdp'],
      security: [{ bearerAuth: [] }],
      parameters: [idParameter('cdp'), rangeHeader],
      responses: partialResponses(errorResponses, ['cdp_session_not_found', ...NOT_FOUND_RECORDING], 'video/mp4', 'the recording'),
    },
  },
  '/tasks/{id}/steps/{seq}/screenshot': {
    get: {
      operationId: 'getStepScreenshot',
      summary: 'Download the JPEG of the page after a step',
      description: "A step's `screenshot_url` points here; 404 screenshot_not_found when the step has none.",
      tags: ['tasks'],
      security: [{ bearerAuth: [] }],
      parameters: [idParameter('task'), { name: 'seq', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }, rangeHeader],
      responses: partialResponses(errorResponses, ['task_not_found', 'screenshot_not_found', 'invalid_request'], 'image/jpeg', 'the screenshot'),
    },
  },
  '/tasks/{id}/files/{file_id}': {
    get: {
      operationId: 'getTaskFile',
      summary: 'Download a file the task downloaded',
      description: 'Sent as an attachment (Content-Disposition) with the content type of its name; its sha256 is in the list.',
      tags: ['tasks'],
      security: [{ bearerAuth: [] }],
      parameters: [idParameter('task'), { name: 'file_id', in: 'path', required: true, schema: { type: 'string', pattern: '^file_' } }, rangeHeader],
      responses: partialResponses(errorResponses, ['task_not_found', 'file_not_found'], 'application/octet-stream', 'the file'),
    },
  },
});
