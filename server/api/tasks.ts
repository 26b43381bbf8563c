import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { ApiError } from '../core/errors';
import { loadDeviceForCaller } from '../domain/devices/load-device';
import { attachmentDisposition, listTaskFiles, loadTaskFileForCaller, TaskFileSchema } from '../domain/files/task-files';
import type { Principal } from '../domain/keys/principal';
import { PageQuerySchema } from '../domain/pagination/cursor';
import { cancelTask } from '../domain/tasks/cancel-task';
import { getTask, listDeviceTasks, loadTaskForCaller } from '../domain/tasks/load-task';
import { submitTask } from '../domain/tasks/submit-task';
import { SubmitTaskBodySchema } from '../domain/tasks/task-input';
import { TaskSchema, taskStoppedRecording } from '../domain/tasks/task-resource';
import { CONTRACT_TIMING, openEventStream, type StreamTiming } from '../http/event-stream';
import { sendObject } from '../http/send-object';
import type { Services } from '../services/services';
import { scoped, writeGated, writeGatedOn } from '../trpc/procedures';
import { idParameter, rawEntryPoint } from './entry-point';
import { recordingEntryPoint } from './recording-route';
import { sendStepScreenshot, stepScreenshotObject } from './task-artifact-bytes';

// /v1 tasks: submit on a device, list, get, cancel; their files, recordings, step screenshots and event stream.

export const submitTaskProcedure = writeGatedOn('operator:tasks:write', 'device_not_found', loadDeviceForCaller)
  .meta({ openapi: { method: 'POST', path: '/devices/{id}/tasks', tags: ['tasks'], summary: "Submit a task to a device's single task slot" }, successStatus: 202 })
  .input(SubmitTaskBodySchema.extend({ id: z.string().max(200) }).strict())
  .output(TaskSchema)
  .mutation(({ ctx, input: { id: _pathId, ...body } }) =>
    submitTask(ctx.services, { principal: ctx.principal, requestId: ctx.requestId, device: ctx.resource, body, idempotencyKey: ctx.req.headers['idempotency-key'] }),
  );

export const listDeviceTasksProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/devices/{id}/tasks', tags: ['tasks'], summary: "List a device's tasks, newest first" } })
  .input(PageQuerySchema.extend({ id: z.string().max(200) }).strict())
  .output(z.object({ data: z.array(TaskSchema), next_cursor: z.string() }))
  .query(({ ctx, input: { id, ...page } }) => listDeviceTasks(ctx.services.db, ctx.services.cursors, ctx.principal, id, page));

export const getTaskProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/tasks/{id}', tags: ['tasks'], summary: 'Get a task' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(TaskSchema)
  .query(({ ctx, input }) => getTask(ctx.services.db, ctx.principal, input.id));

export const cancelTaskProcedure = writeGated('operator:tasks:write')
  .meta({ openapi: { method: 'POST', path: '/tasks/{id}/cancel', tags: ['tasks'], summary: 'Cancel a running or parked task' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(TaskSchema)
  .mutation(({ ctx, input }) => cancelTask(ctx.services.db, ctx.principal, ctx.requestId, input.id));

export const listTaskFilesProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/tasks/{id}/files', tags: ['tasks'], summary: "List the files a task's page downloaded, newest first" } })
  .input(PageQuerySchema.extend({ id: z.string().max(200) }).strict())
  .output(z.object({ data: z.array(TaskFileSchema), next_cursor: z.string() }))
  .query(({ ctx, input: { id, ...page } }) => listTaskFiles(ctx.services.db, ctx.services.cursors, ctx.principal, id, page));

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
          // An unreachable database is the availability's to tell, once, not each stream's;
          // the client reconnects with Last-Event-ID once it is back.
          if (!services.databaseAvailability.absorb(error)) services.log.error({ err: error, requestId }, 'task event stream failed');
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

/** GET /v1/tasks/{id}/recording: the video of the task's latest run. */
export const getTaskRecording = recordingEntryPoint({
  path: '/tasks/{id}/recording',
  scopes: ['operator:tasks:read'],
  subject: 'task',
  load: async (services, principal, id) => {
    const task = await loadTaskForCaller(services.db, principal, id);
    return { id: task.id, stoppedRecording: taskStoppedRecording(task) };
  },
  openapi: {
    operationId: 'getTaskRecording',
    summary: "Download the video of a task's latest run (MP4, H.264)",
    description: "404 recording_not_found until a run of the task finished recording. A run's video is stored just after the task's end is written: asked for meanwhile, it is waited for.",
    tags: ['tasks'],
    idPrefix: 'task',
    notFound: 'task_not_found',
  },
});

/**
 * The stored JPEG of the caller's task's step `seq`: another organization's task is 404
 * task_not_found, a `seq` that is not a step number 400 (`param: "seq"`), a step without
 * one 404 screenshot_not_found. The route's and the MCP tool `get_step_screenshot`'s.
 */
export async function findStepScreenshot(services: Services, principal: Principal, taskPublicId: string, seq: string): Promise<{ key: string; size: number }> {
  const task = await loadTaskForCaller(services.db, principal, taskPublicId);
  return stepScreenshotObject(services, task.id, seq);
}

/** GET /v1/tasks/{id}/steps/{seq}/screenshot: the JPEG of the page after the step. The MCP tool resolves its caller by this entry's rule. */
export const getStepScreenshot = rawEntryPoint({
  method: 'GET',
  path: '/tasks/{id}/steps/{seq}/screenshot',
  caller: { kind: 'api_key', scopes: ['operator:tasks:read'] },
  openapi: {
    operationId: 'getStepScreenshot',
    summary: 'Download the JPEG of the page after a step',
    description: "A step's `screenshot_url` points here; 404 screenshot_not_found when the step has none.",
    tags: ['tasks'],
    parameters: [idParameter('id', 'task'), { name: 'seq', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
    response: { kind: 'bytes', contentType: 'image/jpeg', what: 'the screenshot' },
    errors: ['task_not_found', 'screenshot_not_found', 'invalid_request'],
  },
  async handle({ req, res, params, caller, services }) {
    const task = await loadTaskForCaller(services.db, caller.principal, params.id!);
    await sendStepScreenshot(services, req, res, task.id, params.seq!);
  },
});

/**
 * GET /v1/tasks/{id}/files/{file_id}: the bytes of a file the task downloaded, as an
 * attachment (never rendered by a browser), with `Range`.
 */
export const getTaskFile = rawEntryPoint({
  method: 'GET',
  path: '/tasks/{id}/files/{file_id}',
  caller: { kind: 'api_key', scopes: ['operator:tasks:read'] },
  openapi: {
    operationId: 'getTaskFile',
    summary: 'Download a file the task downloaded',
    description: 'Sent as an attachment (Content-Disposition) with the content type of its name; its sha256 is in the list.',
    tags: ['tasks'],
    parameters: [idParameter('id', 'task'), idParameter('file_id', 'file')],
    response: { kind: 'bytes', contentType: 'application/octet-stream', what: 'the file' },
    errors: ['task_not_found', 'file_not_found'],
  },
  async handle({ req, res, params, caller, services }) {
    const file = await loadTaskFileForCaller(services.db, caller.principal, params.id!, params.file_id!);
    const sent = await sendObject(services.store, req, res, { key: file.objectKey, size: file.sizeBytes, contentType: file.contentType, contentDisposition: attachmentDisposition(file.name) });
    if (!sent) throw new ApiError('file_not_found');
  },
});
