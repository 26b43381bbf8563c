/** Why a run stopped early: the caller's signal (cancel) or the task's deadline. */
export type InterruptionReason = 'canceled' | 'timeout';

export class Interrupted extends Error {
  constructor(readonly reason: InterruptionReason) {
    super(`agent run interrupted: ${reason}`);
    this.name = 'Interrupted';
  }
}

/** setTimeout fires at once for delays above 2^31-1 ms; longer deadlines are re-armed. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Watches the caller's abort signal and the deadline together. Browser actions cannot be
 * aborted, so instead of waiting for them the run races each one against the interruption
 * (`guard`): a cancel or timeout ends the run within a tick even in the middle of a long
 * `wait for`. The abandoned action settles later and is ignored.
 */
export class Interruption {
  readonly #controller = new AbortController();
  readonly #interrupted: Promise<never>;
  readonly #deadline: number;
  readonly #callerSignal: AbortSignal;
  #reject: (error: Interrupted) => void = () => undefined;
  #reason: InterruptionReason | null = null;
  #timer: NodeJS.Timeout | undefined;

  constructor(signal: AbortSignal, deadline: number) {
    this.#deadline = deadline;
    this.#callerSignal = signal;
    this.#interrupted = new Promise<never>((_, reject) => {
      this.#reject = reject;
    });
    // Nobody may be racing at the moment it fires; that is not an unhandled rejection.
    this.#interrupted.catch(() => undefined);
    if (signal.aborted) this.#settle('canceled');
    else signal.addEventListener('abort', this.#onAbort, { once: true });
    this.#arm();
  }

  /** Aborted on cancel or timeout; planners pass it to their HTTP calls. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get reason(): InterruptionReason | null {
    if (this.#reason === null && Date.now() >= this.#deadline) this.#settle('timeout');
    return this.#reason;
  }

  /** Milliseconds until the deadline, at least 0. */
  remainingMs(): number {
    return Math.max(0, this.#deadline - Date.now());
  }

  /** Throws Interrupted if the run should stop now. */
  check(): void {
    const reason = this.reason;
    if (reason !== null) throw new Interrupted(reason);
  }

  /**
   * Starts `work` unless the run is already interrupted, and resolves as it does unless the
   * run is interrupted first.
   */
  guard<T>(work: () => Promise<T>): Promise<T> {
    this.check();
    return Promise.race([work(), this.#interrupted]);
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#callerSignal.removeEventListener('abort', this.#onAbort);
  }

  readonly #onAbort = (): void => this.#settle('canceled');

  #arm(): void {
    const remaining = this.#deadline - Date.now();
    if (remaining <= 0) this.#settle('timeout');
    else this.#timer = setTimeout(() => this.#arm(), Math.min(remaining, LONGEST_TIMER_MS));
  }

  #settle(reason: InterruptionReason): void {
    if (this.#reason !== null) return;
    this.#reason = reason;
    clearTimeout(this.#timer);
    // Reject before aborting so a race sees Interrupted rather than the planner's abort error.
    this.#reject(new Interrupted(reason));
    this.#controller.abort(new Interrupted(reason));
  }
}
