import { settledWithin } from '../core/settled-within';

/** One encoding of a finished recording; told by its signal when the service stops. */
export type EncodeJob = (stopping: AbortSignal) => Promise<void>;

/**
 * The encodings waiting on this host, run in the order they came, `concurrency` at once:
 * recordings are encoded after their subjects end (recorder.ts), and a burst of ended
 * tasks must not start a burst of ffmpeg processes beside the browsers still at work.
 * A stop gives them a while, then aborts the encodings running (their frames stay for the
 * next start) and drops the waiting ones (which the next start finds the same way).
 */
export class EncodeQueue {
  readonly #concurrency: number;
  readonly #waiting: EncodeJob[] = [];
  readonly #running = new Set<Promise<void>>();
  readonly #stopping = new AbortController();
  #accepting = true;

  constructor(concurrency: number) {
    this.#concurrency = Math.max(1, concurrency);
  }

  /** Encodings waiting or running. */
  get size(): number {
    return this.#waiting.length + this.#running.size;
  }

  /** Runs `job` once the ones before it have started and a place is free; never throws. */
  add(job: EncodeJob): void {
    if (!this.#accepting) return;
    this.#waiting.push(job);
    this.#next();
  }

  /**
   * Takes no more; lets what is waiting or running finish for up to `waitMs`, then aborts
   * the running encodings and waits for them to end, and drops the waiting ones.
   */
  async stop(waitMs: number): Promise<void> {
    this.#accepting = false;
    await settledWithin(this.#drained(), waitMs);
    this.#waiting.length = 0;
    this.#stopping.abort();
    await Promise.all(this.#running);
  }

  async #drained(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  #next(): void {
    while (this.#running.size < this.#concurrency && this.#waiting.length > 0) {
      const job = this.#waiting.shift()!;
      const running: Promise<void> = job(this.#stopping.signal)
        .catch(() => undefined)
        .finally(() => {
          this.#running.delete(running);
          this.#next();
        });
      this.#running.add(running);
    }
  }
}
