import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConcurrencySlots } from '../../domain/rate-limit/concurrency-slots';
import { ApiError } from '../../errors';
import { authorizeRequest } from '../../http/authorize';
import type { RawRoute } from '../../http/raw-route';
import { sendErrorResponse } from '../../http/send-error';
import type { KeyRevocations } from '../../domain/keys/key-revocations';
import { loadTaskForCaller } from '../../domain/tasks/load-task';
import type { TaskStepFeeds } from '../../domain/tasks/task-step-feeds';

export interface StreamTiming {
  /** Interval of the `: keep-alive` comment (CONTRACT.md: 15 s). */
  keepAliveMs: number;
  /** Spec: a stream whose task is not terminal is closed after 300 s; the client resumes with after_seq. */
  maxStreamMs: number;
}

const CONTRACT_TIMING: StreamTiming = { keepAliveMs: 15_000, maxStreamMs: 300_000 };
// A key at its limit of open streams gets a slot back as soon as one of them ends (its task
// ends, its client leaves, or its time runs out); this is how long to wait before asking again.
const STREAM_SLOT_RETRY_AFTER_SECS = 5;
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

/**
 * The open streams of this process, so a shutdown can end them instead of waiting on them,
 * and how many each API key holds (OPERATOR_MAX_STREAMS_PER_KEY, counted per instance).
 */
export class EventStreams {
  private readonly open = new Set<(closeConnection: boolean) => void>();
  private readonly perKey: ConcurrencySlots;

  constructor(maxPerKey: number) {
    this.perKey = new ConcurrencySlots(maxPerKey);
  }

  /** One of the key's stream slots, to give back when the stream ends; 429 too_many_streams when none is free. */
  claim(keyId: string): () => void {
    const release = this.perKey.claim(keyId);
    if (release === null) throw new ApiError('too_many_streams', { headers: { 'Retry-After': String(STREAM_SLOT_RETRY_AFTER_SECS) } });
    return release;
  }

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
 * Steps reach an open stream through the task's shared feed (LISTEN/NOTIFY, one read per
 * change for all the task's streams), after the last seq the stream sent, so it neither
 * skips nor repeats one, whichever notifications arrive, merge or get lost.
 */
export function taskEventsRoute(feeds: TaskStepFeeds, streams: EventStreams, timing: StreamTiming = CONTRACT_TIMING): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/tasks\/([^/]+)\/events\/?$/,
    template: '/tasks/{id}/events',
    async handle(req, res, { requestId, services, params }) {
      let start: { taskId: string; afterSeq: number; keyId: string; releaseSlot: () => void };
      try {
        const principal = await authorizeRequest(services, req, res, ['operator:tasks:read']);
        const afterSeq = parseAfterSeq(req);
        const task = await loadTaskForCaller(services.db, principal, decodePathId(params[0]!));
        start = { taskId: task.id, afterSeq, keyId: principal.keyId, releaseSlot: streams.claim(principal.keyId) };
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
        return;
      }
      streamTask(req, res, { ...start, timing, feeds, streams, keyRevocations: services.keyRevocations, onError: (error) => services.log.error({ err: error, requestId }, 'task event stream failed') });
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
  releaseSlot: () => void;
  /** The key that opened the stream: its revocation ends the stream. */
  keyId: string;
  keyRevocations: KeyRevocations;
  timing: StreamTiming;
  feeds: TaskStepFeeds;
  streams: EventStreams;
  onError: (error: unknown) => void;
}

function streamTask(req: IncomingMessage, res: ServerResponse, options: StreamOptions): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    // Proxies such as nginx would otherwise buffer the stream.
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();

  let ended = false;
  const end = (closeConnection = false) => {
    if (ended) return;
    ended = true;
    clearInterval(keepAlive);
    clearTimeout(maxDuration);
    unsubscribe();
    unwatchKey();
    unregister();
    options.releaseSlot();
    res.end(() => {
      if (closeConnection) res.socket?.destroy();
    });
  };

  const unsubscribe = options.feeds.subscribe(options.taskId, options.afterSeq, {
    steps: (steps) => {
      for (const step of steps) res.write(`id: ${step.seq}\nevent: step\ndata: ${JSON.stringify(step)}\n\n`);
    },
    done: (task) => {
      res.write(`event: done\ndata: ${JSON.stringify(task)}\n\n`);
      end();
    },
    failed: (error) => {
      options.onError(error);
      end();
    },
  });
  // Revoking the key ends the stream on whichever instance serves it, and drops the
  // connection as a shutdown does.
  const unwatchKey = options.keyRevocations.watch(options.keyId, () => end(true));
  const unregister = options.streams.add(end);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), options.timing.keepAliveMs);
  const maxDuration = setTimeout(() => end(), options.timing.maxStreamMs);
  req.on('close', () => end());
  res.on('error', () => end());
  // A client that left while the task was looked up closed before these listeners: its
  // stream (and its key's slot) must not wait for the 300 s to end.
  if (res.socket === null || res.socket.destroyed) end();
}
