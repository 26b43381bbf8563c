import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../core/errors';
import { PeriodicTimer } from '../domain/periodic-timer';
import { ConcurrencySlots } from '../domain/rate-limit/concurrency-slots';

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

export interface EventStream {
  /** Writes one event; `id` lets a client resume after it (Last-Event-ID). */
  send(event: string, data: unknown, id?: number): void;
  /** Ends the stream once; `closeConnection` drops the connection too (shutdown, revocation). */
  end(closeConnection?: boolean): void;
}

/**
 * Starts a `text/event-stream` answer: headers flushed at once, a keep-alive comment every
 * `timing.keepAliveMs`, ended after `timing.maxStreamMs`, when the client leaves, or by
 * `endAll()` of `streams`. `onEnd` runs exactly once, whatever ended it.
 */
export function openEventStream(req: IncomingMessage, res: ServerResponse, options: { timing: StreamTiming; streams: EventStreams; onEnd: () => void }): EventStream {
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
    unregister();
    options.onEnd();
    res.end(() => {
      if (closeConnection) res.socket?.destroy();
    });
  };
  const unregister = options.streams.add(end);
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
