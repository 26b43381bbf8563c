import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../core/errors';
import { loadTaskForCaller } from '../../domain/tasks/load-task';
import type { TaskStepFeeds } from '../../domain/tasks/task-step-feeds';
import { resolveCaller } from '../../http/resolve-caller';
import { CONTRACT_TIMING, openEventStream, type EventStreams, type StreamTiming } from '../../http/event-stream';
import type { RawRoute } from '../../http/raw-route';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';

const INTEGER = /^-?\d{1,15}$/;

/**
 * GET /v1/tasks/{id}/events: `text/event-stream` of the task's steps, then `done` with the
 * terminal task. Served raw (not tRPC) because the response is a stream
 * (server/http/event-stream.ts carries it; task-events-openapi.ts documents it).
 *
 * Steps reach an open stream through the task's shared feed (LISTEN/NOTIFY, one read per
 * change for all the task's streams), after the last seq the stream sent, so it neither
 * skips nor repeats one, whichever notifications arrive, merge or get lost. Revoking the
 * key that opened the stream ends it, on whichever instance serves it.
 */
export function taskEventsRoute(services: Services, feeds: TaskStepFeeds, streams: EventStreams, timing: StreamTiming = CONTRACT_TIMING): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/tasks\/([^/]+)\/events\/?$/,
    template: '/tasks/{id}/events',
    async handle(req, res, { requestId, params }) {
      let start: { taskId: string; afterSeq: number; keyId: string; releaseSlot: () => void };
      try {
        const principal = (await resolveCaller(services, req, res, { kind: 'api_key', scopes: ['operator:tasks:read'] })).principal;
        const afterSeq = parseAfterSeq(req);
        const task = await loadTaskForCaller(services.db, principal, decodePathId(params[0]!));
        start = { taskId: task.id, afterSeq, keyId: principal.keyId, releaseSlot: streams.claim(principal.keyId) };
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
        return;
      }
      const stream = openEventStream(req, res, {
        timing,
        streams,
        onEnd: () => {
          unsubscribe();
          unwatchKey();
          start.releaseSlot();
        },
      });
      const unsubscribe = feeds.subscribe(start.taskId, start.afterSeq, {
        steps: (steps) => {
          for (const step of steps) stream.send('step', step, step.seq);
        },
        done: (task) => {
          stream.send('done', task);
          stream.end();
        },
        failed: (error) => {
          services.log.error({ err: error, requestId }, 'task event stream failed');
          stream.end();
        },
      });
      // Dropping the connection as a shutdown does: the key may not resume.
      const unwatchKey = services.keyRevocations.watch(start.keyId, () => stream.end(true));
      // A client that left while the task was looked up closed before the stream's
      // listeners: its stream (and its key's slot) must not wait for the 300 s to end.
      if (res.socket === null || res.socket.destroyed) stream.end();
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
