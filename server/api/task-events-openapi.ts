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
          description:
            'text/event-stream of `TaskEvent` frames: `id: <seq>` `event: step` `data: <Step>` for each step; ' +
            'a `: keep-alive` comment every 15 s; `event: done` `data: <Task>` and the stream ends. Closed after 300 s if the task is not terminal: reconnect with `after_seq`.',
          headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
          // The body is a stream of these frames (OpenAPI 3.2's itemSchema; 3.1 has no better place).
          content: { 'text/event-stream': { schema: { $ref: '#/components/schemas/TaskEvent' } } },
        },
        ...errorResponses(STREAM_ERRORS, true),
      },
    },
  };
}
