import { PeriodicTimer } from '../domain/periodic-timer';
import type { Worker } from './worker';

/** A queue of leased work: what to claim, how to work an item, what wakes the worker. */
export interface QueueWorkerOptions<T> {
  name: string;
  /** Items worked at once. */
  concurrency: number;
  /**
   * Claims up to `limit` due items under the queue's lease (`domain/lease.ts`). A claim
   * that returns fewer than asked means nothing more is due now.
   */
  claim(limit: number): Promise<T[]>;
  /** Works one claimed item. A rejection goes to `onItemError`; the item's lease stays, so it is claimed again once that runs out. */
  work(item: T): Promise<void>;
  /** The longest the worker sleeps with a free slot before claiming again, catching a lost wake. */
  pollMs: number;
  /** How soon the next item falls due (null: nothing waits), to sleep no longer than that. */
  nextDueInMs?: () => Promise<number | null>;
  /**
   * How many free slots a finished item waits for before it wakes a claim (1 by default):
   * a claim for several items costs about what a claim for one does.
   */
  refillAt?: number;
  /** Subscribes `wake` to what announces new work (a NOTIFY channel); returns the unsubscribe. */
  wakeOn?: (wake: () => void) => () => void;
  /** A claim that failed; the next wake or poll claims again. */
  onError(error: unknown): void;
  onItemError(item: T, error: unknown): void;
}

/**
 * The one worker over a leased queue: claims as many due items as it has free slots, works
 * them, and claims again when woken (a notification, a finished item) or at the latest
 * `pollMs` after the last claim. Claims are the ticks of one PeriodicTimer, so two never
 * run at once and every wake during a claim makes exactly one more. On stop it claims
 * nothing more and waits for the items in flight.
 */
export class QueueWorker<T> implements Worker {
  readonly name: string;
  readonly #options: QueueWorkerOptions<T>;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #claims: PeriodicTimer;
  #unsubscribe: () => void = () => undefined;
  #stopped = false;

  constructor(options: QueueWorkerOptions<T>) {
    this.name = options.name;
    this.#options = options;
    this.#claims = new PeriodicTimer(options.pollMs, () => this.#fillFreeSlots(), options.onError);
  }

  start(): void {
    this.#unsubscribe = this.#options.wakeOn?.(() => this.#claims.wake()) ?? (() => undefined);
    this.#claims.start();
    this.#claims.wake();
  }

  /**
   * Claims nothing more, then calls `endItems` (which may tell the items in flight to end
   * early), and waits for the items in flight to finish.
   */
  async stop(endItems: () => void = () => undefined): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe();
    // A claim in flight may still start items: they are waited for like the others.
    await this.#claims.stop();
    endItems();
    await Promise.all(this.#inFlight);
  }

  get #free(): number {
    return this.#options.concurrency - this.#inFlight.size;
  }

  /** Fills the free slots; returns how soon to claim again when a slot stays free. */
  async #fillFreeSlots(): Promise<number | undefined> {
    while (!this.#stopped && this.#free > 0) {
      const limit = this.#free;
      const claimed = await this.#options.claim(limit);
      // Worked even if stop began meanwhile: stop waits for them, rather than leaving them
      // leased until the lease runs out.
      claimed.forEach((item) => this.#launch(item));
      if (claimed.length < limit) break;
    }
    if (this.#stopped || this.#free === 0 || this.#options.nextDueInMs === undefined) return undefined;
    return (await this.#options.nextDueInMs()) ?? undefined;
  }

  #launch(item: T): void {
    const working = this.#options
      .work(item)
      .catch((error: unknown) => this.#options.onItemError(item, error))
      .finally(() => {
        this.#inFlight.delete(working);
        if (this.#free >= (this.#options.refillAt ?? 1)) this.#claims.wake();
      });
    this.#inFlight.add(working);
  }
}
