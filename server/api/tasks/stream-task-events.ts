import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DbOrTx } from '../../../db/client';
import { ApiError } from '../../errors';
import { authorizeRequest } from '../../http/authorize';
import type { RawRoute } from '../../http/raw-route';
import { sendErrorResponse } from '../../http/send-error';
import type { KeyRevocations } from '../../domain/keys/key-revocations';
import type { TaskChange, TaskChannel } from '../../domain/tasks/task-channel';
import { getTaskIfTerminal, loadTaskForCaller } from '../../domain/tasks/load-task';
import { stepsAfter } from '../../domain/tasks/task-steps';

export interface StreamTiming {
  /** Interval of the `: keep-alive` comment (CONTRACT.md: 15 s). */
  keepAliveMs: number;
  /** Spec: a stream whose task is not terminal is closed after 300 s; the client resumes with after_seq. */
  maxStreamMs: number;
}

const CONTRACT_TIMING: StreamTiming = { keepAliveMs: 15_000, maxStreamMs: 300_000 };
const STEP_BATCH = 500;
const INTEGER = /^-?\d{1,15}$/;

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
          'text/event-stream. Frames: `id: <seq>` `event: step` `data: {seq, task_id, type, action, url, title, note, created_at}`; ' +
          'a `: keep-alive` comment every 15 s; `event: done` `data: <Task>` and the stream ends. Closed after 300 s if the task is not terminal.',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      default: { description: 'Error (CONTRACT.md body)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    },
  },
};

/** The open streams of this process, so a shutdown can end them instead of waiting on them. */
export class EventStreams {
  private readonly open = new Set<(closeConnection: boolean) => void>();

  add(end: (closeConnection: boolean) => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }

  /** Ends every stream and closes its connection, which would otherwise idle in keep-alive. */
  endAll(): void {
    for (const end of [...this.open]) end(true);
  }
}

/**
 * GET /v1/tasks/{id}/events: `text/event-stream` of the task's steps, then `done` with the
 * terminal task. Served raw (not tRPC) because the response is a stream.
 *
 * Steps reach an open stream through the task channel (LISTEN/NOTIFY): on each
 * notification the stream reads the steps after the last seq it sent, so it neither
 * skips nor repeats one, whichever notifications arrive, merge or get lost.
 */
export function taskEventsRoute(channel: TaskChannel, streams: EventStreams, timing: StreamTiming = CONTRACT_TIMING): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/tasks\/([^/]+)\/events\/?$/,
    async handle(req, res, { requestId, services, params }) {
      let start: { taskId: string; afterSeq: number; keyId: string };
      try {
        const principal = await authorizeRequest(services, req, res, ['operator:tasks:read']);
        const afterSeq = parseAfterSeq(req);
        const task = await loadTaskForCaller(services.db, principal, decodePathId(params[0]!));
        start = { taskId: task.id, afterSeq, keyId: principal.keyId };
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
        return;
      }
      await streamTask(req, res, { ...start, timing, db: services.db, channel, streams, keyRevocations: services.keyRevocations, onError: (error) => services.log.error({ err: error, requestId }, 'task event stream failed') });
    },
  };
}

/** A path segment that is not valid percent-encoding stays as sent: it is then no id (404). */
function decodePathId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
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

interface StreamOptions {
  taskId: string;
  afterSeq: number;
  /** The key that opened the stream: its revocation ends the stream. */
  keyId: string;
  keyRevocations: KeyRevocations;
  timing: StreamTiming;
  db: DbOrTx;
  channel: TaskChannel;
  streams: EventStreams;
  onError: (error: unknown) => void;
}

async function streamTask(req: IncomingMessage, res: ServerResponse, options: StreamOptions): Promise<void> {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    // Proxies such as nginx would otherwise buffer the stream.
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();

  let lastSeq = options.afterSeq;
  let ended = false;
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;
  let checkStatus = false;

  const end = (closeConnection = false) => {
    if (ended) return;
    ended = true;
    clearInterval(keepAlive);
    clearTimeout(maxDuration);
    unsubscribe();
    unwatchKey();
    unregister();
    res.end(() => {
      if (closeConnection) res.socket?.destroy();
    });
  };

  /**
   * Sends every step after lastSeq, then `done` if the task is terminal; one pump at a
   * time. The status is read only when it may have changed (start, a `state`
   * notification, a reconnect), not on every step: one query per step keeps the latency low.
   */
  const pump = (change: TaskChange | 'start') => {
    if (change !== 'step') checkStatus = true;
    if (pumping !== null) {
      pumpAgain = true;
      return;
    }
    pumping = (async () => {
      do {
        pumpAgain = false;
        const readStatus = checkStatus;
        checkStatus = false;
        // The status is read before the steps: a task seen terminal has all its steps
        // committed, so the steps read next are complete before `done` goes out.
        const terminal = readStatus ? await getTaskIfTerminal(options.db, options.taskId) : null;
        for (;;) {
          const steps = await stepsAfter(options.db, options.taskId, lastSeq, STEP_BATCH);
          if (ended) return;
          for (const step of steps) {
            res.write(`id: ${step.seq}\nevent: step\ndata: ${JSON.stringify(step)}\n\n`);
            lastSeq = step.seq;
          }
          if (steps.length < STEP_BATCH) break;
        }
        if (terminal !== null) {
          res.write(`event: done\ndata: ${JSON.stringify(terminal)}\n\n`);
          end();
          return;
        }
      } while (pumpAgain && !ended);
    })()
      .catch((error: unknown) => {
        options.onError(error);
        end();
      })
      .finally(() => {
        pumping = null;
        // A notification that came between the loop's last check and here.
        if (pumpAgain && !ended) pump('step');
      });
  };

  // Subscribed before the first read, so no step committed after it can be missed.
  const unsubscribe = options.channel.subscribe(options.taskId, pump);
  // Revoking the key ends the stream on whichever instance serves it, and drops the
  // connection as a shutdown does.
  const unwatchKey = options.keyRevocations.watch(options.keyId, () => end(true));
  const unregister = options.streams.add(end);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), options.timing.keepAliveMs);
  const maxDuration = setTimeout(() => end(), options.timing.maxStreamMs);
  req.on('close', () => end());
  res.on('error', () => end());
  pump('start');
}
