import { settledWithin } from '../core/settled-within';

/** One encoding of a finished recording; told by its signal when the service stops. */
export type EncodeJob = (stopping: AbortSignal) => Promise<void>;

/** An encoding added, and the moment it may start. */
interface Waiting {
  job: EncodeJob;
  due: number;
}

/**
 * The encodings waiting on this host, run in the order they came, `concurrency` at once,
 * each no sooner than `startAfterMs` after it came: recordings are encoded after their
 * subjects end (recorder.ts), and a burst of ended tasks must not start a burst of ffmpeg
 * processes beside the browsers still at work, nor an encoding start in the moment its
 * subject's client makes its next request. A stop starts what is waiting at once and gives
 * it a while, then aborts the encodings running (their frames stay for the next start) and
 * drops the waiting ones (which the next start finds the same way).
 */
export class EncodeQueue {
  readonly #concurrency: number;
  readonly #startAfterMs: number;
  readonly #waiting: Waiting[] = [];
  readonly #running = new Set<Promise<void>>();
  readonly #stopping = new AbortController();
  #accepting = true;
  /** Set while the first waiting encoding is not due yet and a place is free: starts it when it is. */
  #dueTimer: NodeJS.Timeout | null = null;

  constructor(concurrency: number, startAfterMs = 0) {
    this.#concurrency = Math.max(1, concurrency);
    this.#startAfterMs = startAfterMs;
  }

  /** Encodings waiting or running. */
  get size(): number {
    return this.#waiting.length + this.#running.size;
  }

  /** Runs `job` once the ones before it have started, a place is free and its start is due; never throws. */
  add(job: EncodeJob): void {
    if (!this.#accepting) return;
    this.#waiting.push({ job, due: Date.now() + this.#startAfterMs });
    this.#next();
  }

  /**
   * Takes no more and starts what waits without its delay; lets it finish for up to
   * `waitMs`, then aborts the running encodings and waits for them to end, and drops the
   * waiting ones.
   */
  async stop(waitMs: number): Promise<void> {
    this.#accepting = false;
    this.#next();
    await settledWithin(this.#drained(), waitMs);
    if (this.#dueTimer !== null) clearTimeout(this.#dueTimer);
    this.#waiting.length = 0;
    this.#stopping.abort();
    await Promise.all(this.#running);
  }

  async #drained(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  #next(): void {
    while (this.#running.size < this.#concurrency && this.#waiting.length > 0) {
      const first = this.#waiting[0]!;
      // A stopping queue starts what it still may at once: its wait is bounded by stop()'s.
      if (this.#accepting && first.due > Date.now()) {
        this.#startWhenDue(first.due);
        return;
      }
      this.#waiting.shift();
      const running: Promise<void> = first.job(this.#stopping.signal)
        .catch(() => undefined)
        .finally(() => {
          this.#running.delete(running);
          this.#next();
        });
      this.#running.add(running);
    }
  }

  #startWhenDue(due: number): void {
    if (this.#dueTimer !== null) return;
    this.#dueTimer = setTimeout(() => {
      this.#dueTimer = null;
      this.#next();
    }, due - Date.now());
  }
}
