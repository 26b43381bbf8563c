import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { QueueWorker, type QueueWorkerOptions } from './queue-worker';

const POLL_MS = 1_000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * A queue of `due` items held in memory: claims take from it (and can be held open by the
 * test), items end when the test says, and everything the worker did is counted.
 */
function memoryQueue(options: Partial<QueueWorkerOptions<string>> = {}) {
  const due: string[] = [];
  const finishes = new Map<string, { resolve: () => void; reject: (error: unknown) => void }>();
  const state = { claims: [] as number[], claimsAtOnce: 0, mostClaimsAtOnce: 0, working: 0, mostWorking: 0, itemErrors: [] as string[], subscribed: false };
  let holdClaim: Promise<void> | null = null;
  let wakeFromChannel: () => void = () => undefined;
  const worker = new QueueWorker<string>({
    name: 'memory',
    concurrency: 3,
    pollMs: POLL_MS,
    claim: async (limit) => {
      state.claims.push(limit);
      state.claimsAtOnce += 1;
      state.mostClaimsAtOnce = Math.max(state.mostClaimsAtOnce, state.claimsAtOnce);
      await holdClaim;
      state.claimsAtOnce -= 1;
      return due.splice(0, limit);
    },
    work: (item) => {
      state.working += 1;
      state.mostWorking = Math.max(state.mostWorking, state.working);
      return new Promise<void>((resolve, reject) => finishes.set(item, { resolve, reject })).finally(() => {
        state.working -= 1;
      });
    },
    wakeOn: (wake) => {
      state.subscribed = true;
      wakeFromChannel = wake;
      return () => {
        state.subscribed = false;
      };
    },
    onError: () => undefined,
    onItemError: (item) => state.itemErrors.push(item),
    ...options,
  });
  return {
    worker,
    due,
    state,
    notify: () => wakeFromChannel(),
    async finish(item: string) {
      finishes.get(item)!.resolve();
      await vi.advanceTimersByTimeAsync(0);
    },
    async fail(item: string) {
      finishes.get(item)!.reject(new Error(`${item} failed`));
      await vi.advanceTimersByTimeAsync(0);
    },
    /** Claims wait until the returned function is called. */
    holdClaims(): () => void {
      let release: () => void = () => undefined;
      holdClaim = new Promise<void>((resolve) => {
        release = () => {
          holdClaim = null;
          resolve();
        };
      });
      return release;
    },
  };
}

describe('QueueWorker', () => {
  it('claims at start as many items as it has free slots, and never works more at once', async () => {
    const queue = memoryQueue();
    queue.due.push('a', 'b', 'c', 'd', 'e');
    queue.worker.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.state.claims).toEqual([3]);
    expect(queue.state.working).toBe(3);

    // A finished item frees a slot and wakes a claim for it.
    await queue.finish('a');
    expect(queue.state.claims).toEqual([3, 1]);
    expect(queue.state.working).toBe(3);
    await queue.finish('b');
    await queue.finish('c');
    expect(queue.state.mostWorking).toBe(3);
    expect(queue.due).toEqual([]);
    await Promise.all([queue.worker.stop(), queue.finish('d'), queue.finish('e')]);
  });

  it('is woken by its channel, and polls when nothing wakes it', async () => {
    const queue = memoryQueue();
    queue.worker.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.state.subscribed).toBe(true);
    expect(queue.state.claims).toHaveLength(1);

    queue.due.push('a');
    queue.notify();
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.state.claims).toHaveLength(2);
    expect(queue.state.working).toBe(1);

    // Nothing announced: found by the poll, one interval after the last claim.
    queue.due.push('b');
    await vi.advanceTimersByTimeAsync(POLL_MS - 1);
    expect(queue.state.working).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(queue.state.working).toBe(2);
    await Promise.all([queue.worker.stop(), queue.finish('a'), queue.finish('b')]);
    expect(queue.state.subscribed).toBe(false);
  });

  it('sleeps only until the next item falls due', async () => {
    const queue = memoryQueue({ nextDueInMs: async () => 300 });
    queue.worker.start();
    await vi.advanceTimersByTimeAsync(0);
    queue.due.push('a');
    await vi.advanceTimersByTimeAsync(299);
    expect(queue.state.working).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(queue.state.working).toBe(1);
    await Promise.all([queue.worker.stop(), queue.finish('a')]);
  });

  it('never runs two claims at once: wakes during a claim make exactly one more after it', async () => {
    const queue = memoryQueue();
    const release = queue.holdClaims();
    queue.worker.start();
    await vi.advanceTimersByTimeAsync(0);
    queue.notify();
    queue.notify();
    queue.notify();
    await vi.advanceTimersByTimeAsync(5 * POLL_MS);
    expect(queue.state.claims).toHaveLength(1);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.state.claims).toHaveLength(2);
    expect(queue.state.mostClaimsAtOnce).toBe(1);
    await queue.worker.stop();
  });

  it('with refillAt, a finished item wakes a claim only once that many slots are free', async () => {
    const queue = memoryQueue({ refillAt: 2 });
    queue.due.push('a', 'b', 'c', 'd', 'e');
    queue.worker.start();
    await vi.advanceTimersByTimeAsync(0);
    await queue.finish('a');
    expect(queue.state.claims).toEqual([3]);
    await queue.finish('b');
    expect(queue.state.claims).toEqual([3, 2]);
    await Promise.all([queue.worker.stop(), queue.finish('c'), queue.finish('d'), queue.finish('e')]);
  });

  it('reports an item that failed and frees its slot', async () => {
    const queue = memoryQueue();
    queue.due.push('a');
    queue.worker.start();
    await vi.advanceTimersByTimeAsync(0);
    await queue.fail('a');
    expect(queue.state.itemErrors).toEqual(['a']);
    expect(queue.state.working).toBe(0);
    await queue.worker.stop();
  });

  it('on stop claims nothing more, works what a claim in flight took, and waits for every item', async () => {
    const queue = memoryQueue();
    const release = queue.holdClaims();
    queue.worker.start();
    await vi.advanceTimersByTimeAsync(0);
    queue.due.push('a');

    let stopped = false;
    const ended: number[] = [];
    const stopping = queue.worker
      .stop(() => ended.push(queue.state.working))
      .then(() => {
        stopped = true;
      });
    // The claim in flight ends after stop began: what it took is worked, not left leased.
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toEqual([1]);
    expect(stopped).toBe(false);

    queue.due.push('b');
    queue.notify();
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(queue.state.claims).toHaveLength(1);
    await queue.finish('a');
    await stopping;
    expect(stopped).toBe(true);
    expect(queue.due).toEqual(['b']);
  });
});
