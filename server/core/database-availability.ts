import { isDatabaseUnreachable } from './database-unreachable';
import type { Logger } from './log';

// While the database is unreachable it is asked again this often, by one probe for the
// whole process: what waits for it wakes at most this long after it is back.
const PROBE_INTERVAL_MS = 1_000;

// A query begun during an outage may fail this long after the database came back (a
// connection attempt gives up after db/client.ts's connect timeout, 10 s): such an error
// is first checked by a probe, so one outage is not reported as two.
const SETTLING_MS = 10_000;

/**
 * Whether this process can reach its database: the one notion every worker, run and probe
 * uses. An error that says the database is unreachable (database-unreachable.ts) marks it
 * down, once: one log line, then one probe a second until a query answers, then one line
 * that it is back. So an outage is logged twice however many ticks, runs and requests
 * meet it, and what must wait for the database (a step to record, a task's end) waits for
 * the probe instead of trying in a loop of its own.
 */
export class DatabaseAvailability {
  /** performance.now() when the outage began; null while the database answers. */
  #downSince: number | null = null;
  /** performance.now() when it last came back; the process's start counts as such. */
  #upSince = performance.now();
  #waiters = new Set<() => void>();
  #probeTimer: NodeJS.Timeout | null = null;
  /** The probe that checks an error met while the database was settling; null when none runs. */
  #confirming: Promise<void> | null = null;
  #closed = false;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly log: Logger,
    private readonly settlingMs = SETTLING_MS,
  ) {}

  get reachable(): boolean {
    return this.#downSince === null;
  }

  /** How long the database has been unreachable without a break; 0 while it answers. */
  unreachableForMs(): number {
    return this.#downSince === null ? 0 : performance.now() - this.#downSince;
  }

  /** How long it has answered since it last came back (or since the process started); 0 while it does not. */
  reachableForMs(): number {
    return this.#downSince === null ? performance.now() - this.#upSince : 0;
  }

  /**
   * Notes `error` if it says the database is unreachable and returns true: the caller
   * need not report it. Any other error returns false, for the caller to handle.
   */
  absorb(error: unknown): boolean {
    if (!isDatabaseUnreachable(error)) return false;
    if (this.#downSince !== null || this.#closed || this.#confirming !== null) return true;
    if (this.reachableForMs() < this.settlingMs) {
      const metAt = performance.now();
      this.#confirming = this.probe().then(
        () => undefined,
        () => this.#markDown(error, metAt),
      ).finally(() => {
        this.#confirming = null;
      });
    } else {
      this.#markDown(error, performance.now());
    }
    return true;
  }

  #markDown(error: unknown, since: number): void {
    if (this.#downSince !== null || this.#closed) return;
    this.#downSince = since;
    this.log.error({ err: error }, 'database unreachable: requests answer 503 service_unavailable and workers wait until it is back');
    this.#scheduleProbe();
  }

  /** Whether a query answers within `timeoutMs` now (a readiness probe must not hang on a stuck database); an outage it meets is noted. */
  async answersWithin(timeoutMs: number): Promise<boolean> {
    const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
    const answered = this.probe().then(
      () => true,
      (error: unknown) => {
        this.absorb(error);
        return false;
      },
    );
    return Promise.race([answered, timeout]);
  }

  /** A worker's error handler: an unreachable database is noted here, anything else goes to `report`. */
  reportingOthers(report: (error: unknown) => void): (error: unknown) => void {
    return (error) => {
      if (!this.absorb(error)) report(error);
    };
  }

  /** Resolves once the database answers (at once if it does), or when `signal` aborts or the process stops. */
  async whenReachable(signal?: AbortSignal): Promise<void> {
    // An error being checked: whether the database is down is known once its probe answers.
    if (this.#confirming !== null) await this.#confirming;
    if (this.#downSince === null || this.#closed || signal?.aborted === true) return;
    return new Promise((resolve) => {
      const done = () => {
        this.#waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.#waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Runs `write` until it succeeds; while it fails because the database is unreachable,
   * waits for the database between tries. Any other error, or an unreachable database once
   * `signal` aborted or the process is stopping, is thrown.
   */
  async retryWhileUnreachable<T>(write: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!this.absorb(error) || signal?.aborted === true || this.#closed) throw error;
      }
      await this.whenReachable(signal);
    }
  }

  /** Stops probing and releases every waiter: the process is stopping. */
  close(): void {
    this.#closed = true;
    if (this.#probeTimer !== null) clearTimeout(this.#probeTimer);
    for (const waiter of [...this.#waiters]) waiter();
  }

  #scheduleProbe(): void {
    if (this.#closed) return;
    this.#probeTimer = setTimeout(() => void this.#probeOnce(), PROBE_INTERVAL_MS);
    this.#probeTimer.unref();
  }

  async #probeOnce(): Promise<void> {
    this.#probeTimer = null;
    try {
      await this.probe();
    } catch {
      this.#scheduleProbe();
      return;
    }
    const downForMs = Math.round(this.unreachableForMs());
    this.#downSince = null;
    this.#upSince = performance.now();
    this.log.info({ downForMs }, 'database reachable again');
    for (const waiter of [...this.#waiters]) waiter();
  }
}
