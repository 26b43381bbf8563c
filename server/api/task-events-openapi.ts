// The task event stream is served outside tRPC (its response is a stream), so its entry
// in the OpenAPI document is written by hand, here, beside the generated rest (openapi.ts).

/** The stream's entry in the OpenAPI document (raw routes are not generated from tRPC). */
export const taskEventsOpenApiPath = {
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
          'text/event-stream. Frames: `id: <seq>` `event: step` `data: {seq, task_id, type, action, url, title, note, screenshot_url, created_at}`; ' +
          'a `: keep-alive` comment every 15 s; `event: done` `data: <Task>` and the stream ends. Closed after 300 s if the task is not terminal.',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      default: { description: 'Error (CONTRACT.md body)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    },
  },
};
