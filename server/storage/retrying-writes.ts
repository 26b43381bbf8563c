import type { Logger } from '../core/log';
import { settledWithin } from '../core/settled-within';
import type { ObjectBody, ObjectStore, StoredObject } from './object-store';

// A write the store refused is tried again after this, then after twice as long each
// time, up to RETRY_MAX_MS between attempts.
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

// How long put() waits for its first attempt. A store that answers slowly, or not at all
// (the S3 store gives a silent connection up after 30 s, three times), goes on in the
// background: the run or stop waiting on put() does not.
const FIRST_ATTEMPT_WAIT_MS = 5_000;

/** How long a refused write is tried again: an outage of the store longer than this loses it. */
export const WRITE_PATIENCE_MS = 60 * 60_000;

/**
 * Bytes held in memory by writes waiting for the store (step pictures; a recording waits
 * as its file). Past this a refused write of bytes is given up at once, so an outage
 * cannot take the process's memory.
 */
const MAX_WAITING_BYTES = 64 * 1024 * 1024;

/** What becomes of a write once it is settled; told once. */
export interface WriteOutcome {
  /** The object is in the store. */
  stored(object: StoredObject): Promise<void>;
  /**
   * The write is given up: `failed` once the store refused it for WRITE_PATIENCE_MS (or
   * too many bytes wait already), `stopping` when the process stops first (a file body
   * is still there for the next start to write).
   */
  gaveUp(why: 'failed' | 'stopping'): Promise<void>;
}

type Attempt = { ok: true; object: StoredObject } | { ok: false; error: unknown };

/**
 * Writes to the object store that outlast its outages. The first attempt is made at
 * once; a write the store refuses is tried again in the background, with backoff, until
 * the store takes it, WRITE_PATIENCE_MS have passed, or the process stops (close()). A
 * refused write is logged when it is first refused and when it is stored or given up,
 * not at every attempt.
 */
export class RetryingWrites {
  readonly #store: ObjectStore;
  readonly #log: Logger;
  readonly #stopping = new AbortController();
  readonly #waiting = new Set<Promise<void>>();
  #waitingBytes = 0;

  constructor(store: ObjectStore, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /**
   * Writes the object. Resolves once its first attempt is settled, FIRST_ATTEMPT_WAIT_MS
   * at most: with the object stored and `outcome.stored` done (which may throw, to the
   * caller), or with the write left to the background, whose outcome is told later, or
   * given up at once.
   */
  async put(key: string, body: ObjectBody, contentType: string, outcome: WriteOutcome): Promise<void> {
    const first = this.#attempt(key, body, contentType);
    const settled = await settledWithin(first, FIRST_ATTEMPT_WAIT_MS);
    if (settled?.ok === true) return outcome.stored(settled.object);
    if (settled !== null && this.#stopping.signal.aborted) return outcome.gaveUp('stopping');
    const bytes = Buffer.isBuffer(body) ? body.length : 0;
    if (this.#waitingBytes + bytes > MAX_WAITING_BYTES) {
      this.#log.error({ key }, 'the object store is refusing or slow, and too many writes wait for it already; given up');
      return outcome.gaveUp('failed');
    }
    this.#waitingBytes += bytes;
    const waiting: Promise<void> = this.#wait(key, body, contentType, outcome, first)
      .catch((error: unknown) => this.#log.error({ err: error, key }, 'a write the object store took late could not be recorded'))
      .finally(() => {
        this.#waitingBytes -= bytes;
        this.#waiting.delete(waiting);
      });
    this.#waiting.add(waiting);
  }

  /** Stops trying (an attempt in flight is aborted): every write still waiting is given up as `stopping`; resolves once each was told. */
  async close(): Promise<void> {
    this.#stopping.abort();
    while (this.#waiting.size > 0) await Promise.all(this.#waiting);
  }

  /** The first attempt to its end (stored, if it only was slow), then the retries. */
  async #wait(key: string, body: ObjectBody, contentType: string, outcome: WriteOutcome, first: Promise<Attempt>): Promise<void> {
    const attempt = await first;
    if (attempt.ok) return outcome.stored(attempt.object);
    if (this.#stopping.signal.aborted) return outcome.gaveUp('stopping');
    this.#log.warn({ err: attempt.error, key }, 'the object store refused a write; trying it again in the background');
    return this.#retry(key, body, contentType, outcome);
  }

  async #retry(key: string, body: ObjectBody, contentType: string, outcome: WriteOutcome): Promise<void> {
    const giveUpAt = Date.now() + WRITE_PATIENCE_MS;
    for (let wait = RETRY_FIRST_MS; ; wait = Math.min(wait * 2, RETRY_MAX_MS)) {
      if (!(await this.#sleep(Math.max(0, Math.min(wait, giveUpAt - Date.now()))))) return outcome.gaveUp('stopping');
      const attempt = await this.#attempt(key, body, contentType);
      if (attempt.ok) {
        this.#log.info({ key }, 'a write the object store refused is stored');
        return outcome.stored(attempt.object);
      }
      if (Date.now() >= giveUpAt) {
        this.#log.error({ err: attempt.error, key, patienceMs: WRITE_PATIENCE_MS }, 'the object store refused a write for too long; given up');
        return outcome.gaveUp('failed');
      }
    }
  }

  async #attempt(key: string, body: ObjectBody, contentType: string): Promise<Attempt> {
    try {
      return { ok: true, object: await this.#store.put(key, body, contentType, this.#stopping.signal) };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** Resolves true after `ms`, or false as soon as the process stops. */
  #sleep(ms: number): Promise<boolean> {
    const { signal } = this.#stopping;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const stopped = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', stopped);
        resolve(true);
      }, ms);
      signal.addEventListener('abort', stopped, { once: true });
    });
  }
}
