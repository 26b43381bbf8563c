import type { IncomingMessage, ServerResponse } from 'node:http';
import { PeriodicTimer } from '../domain/periodic-timer';

// Server-sent events as a transport: the response's headers, keep-alive comments, a
// longest lifetime. What a stream carries is its route's business
// (streamTaskEvents in server/api/tasks.ts, following the task by domain/tasks/event-streams.ts).

export interface StreamTiming {
  /** Interval of the `: keep-alive` comment (CONTRACT.md: 15 s). */
  keepAliveMs: number;
  /** Spec: a stream whose task is not terminal is closed after 300 s; the client resumes with after_seq. */
  maxStreamMs: number;
}

export const CONTRACT_TIMING: StreamTiming = { keepAliveMs: 15_000, maxStreamMs: 300_000 };
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
