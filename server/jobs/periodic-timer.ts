/**
 * Runs `tick` every `intervalMs`, counted from the end of one tick to the start of the next:
 * a slow tick delays the next one instead of running beside it. Errors are reported and the
 * timer goes on, since one bad tick must not stop a sweep for good. The timer never keeps the
 * process alive (unref); the server stops it before the database closes.
 */
export class PeriodicTimer {
  #timer: NodeJS.Timeout | null = null;
  #tick: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly tick: () => Promise<void> | void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The first tick comes one interval from now. */
  start(): void {
    this.#schedule();
  }

  /** No tick starts after this; resolves once the tick in progress, if any, has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.#tick;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#tick = this.#runTick();
    }, this.intervalMs);
    this.#timer.unref();
  }

  async #runTick(): Promise<void> {
    try {
      await this.tick();
    } catch (error) {
      this.onError(error);
    }
    this.#schedule();
  }
}
