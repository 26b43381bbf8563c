import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../core/errors';
import { loadTaskForCaller } from '../../domain/tasks/load-task';
import { CONTRACT_TIMING, openEventStream, type StreamTiming } from '../../http/event-stream';
import { idParameter, rawEntryPoint } from '../entry-point';

const INTEGER = /^-?\d{1,15}$/;

/** Schemas of the stream's frames: `event: step` carries a Step, `event: done` the terminal Task. */
const taskEventsComponents = {
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

/**
 * GET /v1/tasks/{id}/events: `text/event-stream` of the task's steps, then `done` with the
 * terminal task (server/http/event-stream.ts carries it).
 *
 * Steps reach an open stream through the task's shared feed (LISTEN/NOTIFY, one read per
 * change for all the task's streams), after the last seq the stream sent, so it neither
 * skips nor repeats one, whichever notifications arrive, merge or get lost. Revoking the
 * key that opened the stream ends it, on whichever instance serves it. `timing`: the
 * contract's keep-alive and longest stream (a test shortens them).
 */
export function streamTaskEvents(timing: StreamTiming = CONTRACT_TIMING) {
  return rawEntryPoint({
    method: 'GET',
    path: '/tasks/{id}/events',
    caller: { kind: 'api_key', scopes: ['operator:tasks:read'] },
    openapi: {
      operationId: 'streamTaskEvents',
      summary: "Stream a task's steps (server-sent events), then `done` with the terminal task",
      tags: ['tasks'],
      parameters: [
        idParameter('id', 'task'),
        { name: 'after_seq', in: 'query', required: false, description: 'Emit only steps whose seq is greater; not an integer: 400 invalid_cursor.', schema: { type: 'integer' } },
        { name: 'Last-Event-ID', in: 'header', required: false, description: 'Honoured like after_seq (an EventSource reconnecting sends it).', schema: { type: 'string' } },
      ],
      response: { kind: 'event_stream', description: FRAME_FORMAT, example: FRAME_EXAMPLE },
      errors: ['invalid_cursor', 'task_not_found', 'too_many_streams'],
      components: taskEventsComponents,
    },
    async handle({ req, res, requestId, params, caller: { principal }, services }) {
      const { eventStreams: streams, stepFeeds: feeds } = services;
      const afterSeq = parseAfterSeq(req);
      const task = await loadTaskForCaller(services.db, principal, params.id!);
      const releaseSlot = streams.claim(principal.keyId);
      let stopFollowing: () => void = () => undefined;
      const stream = openEventStream(req, res, { timing, onEnd: () => stopFollowing() });
      stopFollowing = streams.follow({ feeds, keyRevocations: services.keyRevocations }, principal.keyId, releaseSlot, task.id, afterSeq, {
        steps: (steps) => {
          for (const step of steps) stream.send('step', step, step.seq);
        },
        done: (terminal) => {
          stream.send('done', terminal);
          stream.end();
        },
        failed: (error) => {
          services.log.error({ err: error, requestId }, 'task event stream failed');
          stream.end();
        },
        stopped: (closeConnection) => stream.end(closeConnection),
      });
      // A client that left while the task was looked up closed before the stream's
      // listeners: its stream (and its key's slot) must not wait for the 300 s to end.
      if (res.socket === null || res.socket.destroyed) stream.end();
    },
  });
}

/**
 * `after_seq` from the query, or the `Last-Event-ID` header an EventSource sends on
 * reconnect (it wins: it is newer than the URL it reconnects to). Not an integer: 400
 * invalid_cursor.
 */
function parseAfterSeq(req: IncomingMessage): number {
  const lastEventId = req.headers['last-event-id'];
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams.get('after_seq');
  const given = typeof lastEventId === 'string' && lastEventId.trim() !== '' ? lastEventId.trim() : query;
  if (given === null) return 0;
  if (!INTEGER.test(given)) {
    throw new ApiError('invalid_cursor', { param: 'after_seq', message: 'after_seq (or Last-Event-ID) must be an integer step seq.' });
  }
  return Number(given);
}
