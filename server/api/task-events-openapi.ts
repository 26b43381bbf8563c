// The task event stream is served outside tRPC (its response is a stream), so its entry
// in the OpenAPI document is written here, beside the generated rest (openapi.ts).
import type { ApiErrorCode } from '../core/errors';

/** Schemas of the stream's frames: `event: step` carries a Step, `event: done` the terminal Task. */
export const taskEventsComponents = {
  StepEvent: {
    type: 'object',
    description: 'An SSE frame `id: <seq>` `event: step` `data: <Step>`.',
    required: ['event', 'id', 'data'],
    properties: { event: { const: 'step' }, id: { type: 'string', description: 'The step seq.' }, data: { $ref: '#/components/schemas/Step' } },
  },
  DoneEvent: {
    type: 'object',
    description: 'The last SSE frame, `event: done` `data: <Task>` with the task terminal; the stream then ends.',
    required: ['event', 'data'],
    properties: { event: { const: 'done' }, data: { $ref: '#/components/schemas/Task' } },
  },
  TaskEvent: {
    description: 'One frame of the task event stream.',
    oneOf: [{ $ref: '#/components/schemas/StepEvent' }, { $ref: '#/components/schemas/DoneEvent' }],
    discriminator: { propertyName: 'event', mapping: { step: '#/components/schemas/StepEvent', done: '#/components/schemas/DoneEvent' } },
  },
};

/** The frame format, in the document as in docs/api.md ("Task event stream"). */
const FRAME_FORMAT =
  'A `text/event-stream` (UTF-8) of frames, each one or more `field: value` lines ended by a blank line. For each step, in seq order: ' +
  '`id: <seq>`, `event: step`, `data: <the Step as one line of JSON>`. Once the task is terminal: `event: done`, `data: <the Task as one line of JSON>`, ' +
  'and the server ends the stream. Every 15 s without a frame: the comment `: keep-alive`. A stream whose task is not terminal is ended after 300 s: ' +
  'reconnect with `after_seq` (or `Last-Event-ID`) set to the last id received. Parsed, a frame is a `TaskEvent` (`StepEvent` or `DoneEvent` in components).';
const FRAME_EXAMPLE =
  'id: 1\nevent: step\ndata: {"seq":1,"task_id":"task_...","type":"action", ...}\n\n' + 'event: done\ndata: {"id":"task_...","status":"succeeded", ...}\n\n';

const STREAM_ERRORS: ApiErrorCode[] = ['invalid_cursor', 'invalid_api_key', 'insufficient_scope', 'task_not_found', 'rate_limited', 'too_many_streams', 'internal_error', 'service_unavailable'];

/** The stream's entry in the OpenAPI document (raw routes are not generated from tRPC). */
export function taskEventsOpenApiPath(errorResponses: (codes: readonly ApiErrorCode[], withRateLimitHeaders: boolean) => Record<string, unknown>) {
  return {
    get: {
      operationId: 'streamTaskEvents',
      summary: "Stream a task's steps (server-sent events), then `done` with the terminal task",
      tags: ['tasks'],
      security: [{ bearerAuth: [] }],
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^task_' } },
        { name: 'after_seq', in: 'query', required: false, description: 'Emit only steps whose seq is greater; not an integer: 400 invalid_cursor.', schema: { type: 'integer' } },
        { name: 'Last-Event-ID', in: 'header', required: false, description: 'Honoured like after_seq (an EventSource reconnecting sends it).', schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: FRAME_FORMAT,
          headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
          // What is on the wire: text. Each frame's parsed form is a TaskEvent component
          // (OpenAPI 3.2's itemSchema would say so; 3.1 has no place for it).
          content: { 'text/event-stream': { schema: { type: 'string' }, example: FRAME_EXAMPLE } },
        },
        ...errorResponses(STREAM_ERRORS, true),
      },
    },
  };
}
