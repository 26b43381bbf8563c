import { SingleFlight } from './single-flight';

/**
 * Every timer of the server: runs `tick` every `intervalMs`, counted from the end of one tick
 * to the start of the next, and at once when woken. Ticks never overlap, async ones included:
 * the ticks are a SingleFlight, so a slow tick delays the next one instead of running beside
 * it, and wakes during a tick make exactly one more tick right after it. A tick may return how
 * soon the next one is due (a queue that knows when its next item falls due); never later
 * than the interval. Errors are reported and the timer goes on, since one bad tick must not
 * stop a sweep for good. The timer never keeps the process alive (unref); its owner stops it
 * before what the ticks use (the database) closes.
 *
 * In `domain/` beside SingleFlight, since every layer with a timer (jobs, gateways, event
 * streams, recordings) may import `domain/`, and `domain/` imports none of them.
 */
export class PeriodicTimer {
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  readonly #ticks: SingleFlight;

  constructor(
    private readonly intervalMs: number,
    tick: () => Promise<number | void> | number | void,
    onError: (error: unknown) => void,
  ) {
    this.#ticks = new SingleFlight(async () => {
      // Woken before the timer fired: the tick it would have made is this one.
      this.#clearTimer();
      let nextMs = this.intervalMs;
      try {
        const asked = await tick();
        if (typeof asked === 'number') nextMs = Math.min(Math.max(asked, 0), this.intervalMs);
      } finally {
        this.#schedule(nextMs);
      }
    }, onError);
  }

  /** The first tick comes one interval from now (or when woken, if sooner). */
  start(): void {
    this.#schedule(this.intervalMs);
  }

  /** Ticks now, or right after the tick in progress. */
  wake(): void {
    this.#ticks.wake();
  }

  /** No tick starts after this; resolves once the tick in progress, if any, has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clearTimer();
    await this.#ticks.stop();
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#clearTimer();
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#ticks.wake();
    }, delayMs);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
