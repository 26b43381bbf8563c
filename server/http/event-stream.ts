import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../core/errors';
import { PeriodicTimer } from '../domain/periodic-timer';
import type { KeyRevocations } from '../domain/keys/key-revocations';
import { ConcurrencySlots } from '../domain/rate-limit/concurrency-slots';
import type { StepReader, TaskStepFeeds } from '../domain/tasks/task-step-feeds';

// Server-sent events as a transport: the response's headers, keep-alive comments, a
// longest lifetime, and the registry of this process's open streams. What a stream
// carries is its route's business (server/api/tasks/stream-task-events.ts).

export interface StreamTiming {
  /** Interval of the `: keep-alive` comment (CONTRACT.md: 15 s). */
  keepAliveMs: number;
  /** Spec: a stream whose task is not terminal is closed after 300 s; the client resumes with after_seq. */
  maxStreamMs: number;
}

export const CONTRACT_TIMING: StreamTiming = { keepAliveMs: 15_000, maxStreamMs: 300_000 };
// A key at its limit of open streams gets a slot back as soon as one of them ends (its task
// ends, its client leaves, or its time runs out); this is how long to wait before asking again.
const STREAM_SLOT_RETRY_AFTER_SECS = 5;

/**
 * The tasks this process follows for keys (event streams, MCP's run_task), so a shutdown
 * can end them instead of waiting on them, and how many each API key holds
 * (OPERATOR_MAX_STREAMS_PER_KEY, counted per instance).
 */
export class EventStreams {
  private readonly open = new Set<() => void>();
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

  /**
   * Follows a task's steps (after `afterSeq`) for a key holding one of its slots
   * (`releaseSlot`): until the task ends (`done`, `failed`), the key is revoked or the
   * process stops (`stopped(true)`: drop the connection, the key may not resume), or the
   * returned function is called. Whatever ends it, the feed, the key watch and the slot are
   * given back once. The event stream and MCP's run_task follow tasks so.
   */
  follow(sources: { feeds: TaskStepFeeds; keyRevocations: KeyRevocations }, keyId: string, releaseSlot: () => void, taskId: string, afterSeq: number, follower: StepReader & { stopped(closeConnection: boolean): void }): () => void {
    let following = true;
    const stop = () => {
      if (!following) return false;
      following = false;
      this.open.delete(drop);
      unsubscribe();
      unwatchKey();
      releaseSlot();
      return true;
    };
    const drop = () => stop() && follower.stopped(true);
    this.open.add(drop);
    const unwatchKey = sources.keyRevocations.watch(keyId, drop);
    const unsubscribe = sources.feeds.subscribe(taskId, afterSeq, {
      steps: (steps) => follower.steps(steps),
      done: (task) => stop() && follower.done(task),
      failed: (error) => stop() && follower.failed(error),
    });
    return () => void stop();
  }

  /** Ends every stream and closes its connection, which would otherwise idle in keep-alive. */
  endAll(): void {
    for (const end of [...this.open]) end();
  }
}

export interface EventStream {
  /** Writes one event; `id` lets a client resume after it (Last-Event-ID). */
  send(event: string, data: unknown, id?: number): void;
  /** Ends the stream once; `closeConnection` drops the connection too (shutdown, revocation). */
  end(closeConnection?: boolean): void;
}

/**
 * Starts a `text/event-stream` answer: headers flushed at once, a keep-alive comment every
 * `timing.keepAliveMs`, ended after `timing.maxStreamMs` or when the client leaves.
 * `onEnd` runs exactly once, whatever ended it.
 */
export function openEventStream(req: IncomingMessage, res: ServerResponse, options: { timing: StreamTiming; onEnd: () => void }): EventStream {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    // No `Connection` header: Node answers the client's own (keep-alive, or close and the
    // socket closes after the stream). Forcing keep-alive kept sockets whose next request
    // Node then refused with a bare 400.
    // Proxies such as nginx would otherwise buffer the stream.
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();

  let ended = false;
  const end = (closeConnection = false) => {
    if (ended) return;
    ended = true;
    void keepAlive.stop();
    clearTimeout(maxDuration);
    options.onEnd();
    res.end(() => {
      if (closeConnection) res.socket?.destroy();
    });
  };
  // A write to a response gone bad is ended by its 'error' event, not by the timer.
  const keepAlive = new PeriodicTimer(options.timing.keepAliveMs, () => void res.write(': keep-alive\n\n'), () => end());
  keepAlive.start();
  const maxDuration = setTimeout(() => end(), options.timing.maxStreamMs);
  req.on('close', () => end());
  res.on('error', () => end());
  return {
    send(event, data, id) {
      if (ended) return;
      res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end,
  };
}
