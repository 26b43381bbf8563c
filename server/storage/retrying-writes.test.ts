import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../core/log';
import type { ObjectStore } from './object-store';
import { RetryingWrites, WRITE_PATIENCE_MS, type WriteOutcome } from './retrying-writes';

/**
 * A store that refuses every write while `down` is set, keeps what it takes, and while
 * `answerAfterMs` is set answers only that long after a write (or when it is aborted).
 */
function flakyStore() {
  const state = { down: true, answerAfterMs: 0, attempts: 0, kept: new Map<string, number>() };
  const store = {
    put: async (key: string, body: Buffer, _contentType: string, signal?: AbortSignal) => {
      state.attempts += 1;
      if (state.answerAfterMs > 0) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, state.answerAfterMs);
          signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('aborted'));
          });
        });
      }
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:9000');
      state.kept.set(key, body.length);
      return { size: body.length };
    },
  } as unknown as ObjectStore;
  return { state, store };
}

/** An outcome that notes what it was told. */
function noting() {
  const told: string[] = [];
  const outcome: WriteOutcome = {
    stored: async (object) => void told.push(`stored ${object.size}`),
    gaveUp: async (why) => void told.push(`gave up: ${why}`),
  };
  return { told, outcome };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('RetryingWrites', () => {
  it('stores at once when the store takes the write', async () => {
    const { state, store } = flakyStore();
    state.down = false;
    const { told, outcome } = noting();
    await new RetryingWrites(store, createLogger('silent')).put('a', Buffer.from('abc'), 'text/plain', outcome);
    expect(told).toEqual(['stored 3']);
  });

  it('tries a refused write again in the background, waiting longer each time, until the store takes it', async () => {
    const { state, store } = flakyStore();
    const { told, outcome } = noting();
    const writes = new RetryingWrites(store, createLogger('silent'));
    await writes.put('a', Buffer.from('abcd'), 'text/plain', outcome);
    // The caller goes on: the outcome comes later.
    expect(told).toEqual([]);
    expect(state.attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(state.attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(state.attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.attempts).toBe(3);
    state.down = false;
    await vi.advanceTimersByTimeAsync(4_000);
    expect(told).toEqual(['stored 4']);
    expect(state.kept.get('a')).toBe(4);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(state.attempts).toBe(4);
  });

  it('gives a write up once the store refused it for WRITE_PATIENCE_MS', async () => {
    const { state, store } = flakyStore();
    const { told, outcome } = noting();
    await new RetryingWrites(store, createLogger('silent')).put('a', Buffer.from('x'), 'text/plain', outcome);
    await vi.advanceTimersByTimeAsync(WRITE_PATIENCE_MS - 1_000);
    expect(told).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(told).toEqual(['gave up: failed']);
    // At most every 30 s: about 120 attempts in the hour, not thousands.
    expect(state.attempts).toBeLessThan(130);
  });

  it('gives waiting writes up as stopping when the process stops, and a write refused after it at once', async () => {
    const { store } = flakyStore();
    const writes = new RetryingWrites(store, createLogger('silent'));
    const first = noting();
    await writes.put('a', Buffer.from('x'), 'text/plain', first.outcome);
    await writes.close();
    expect(first.told).toEqual(['gave up: stopping']);
    const second = noting();
    await writes.put('b', Buffer.from('x'), 'text/plain', second.outcome);
    expect(second.told).toEqual(['gave up: stopping']);
  });

  it('holds at most 64 MiB of bytes waiting: a refused write past that is given up at once', async () => {
    const { store } = flakyStore();
    const writes = new RetryingWrites(store, createLogger('silent'));
    const first = noting();
    await writes.put('a', Buffer.alloc(40 * 1024 * 1024), 'image/jpeg', first.outcome);
    const second = noting();
    await writes.put('b', Buffer.alloc(40 * 1024 * 1024), 'image/jpeg', second.outcome);
    expect(first.told).toEqual([]);
    expect(second.told).toEqual(['gave up: failed']);
    // A file waits on disk, not in memory: it is not counted.
    const file = noting();
    await writes.put('c', { file: '/nonexistent' } as never, 'video/mp4', file.outcome);
    expect(file.told).toEqual([]);
    await writes.close();
  });

  it('goes on in the background with a first attempt the store is slow to answer, and stops it when the process stops', async () => {
    const { state, store } = flakyStore();
    state.down = false;
    state.answerAfterMs = 60_000;
    const writes = new RetryingWrites(store, createLogger('silent'));
    const slow = noting();
    let returned = false;
    const putting = writes.put('a', Buffer.from('ab'), 'text/plain', slow.outcome).then(() => (returned = true));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(returned).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await putting;
    expect(slow.told).toEqual([]);
    // The slow attempt ends with the object stored: told then, and not tried again.
    await vi.advanceTimersByTimeAsync(55_000);
    expect(slow.told).toEqual(['stored 2']);
    expect(state.attempts).toBe(1);

    const cut = noting();
    const cutting = writes.put('b', Buffer.from('ab'), 'text/plain', cut.outcome);
    await vi.advanceTimersByTimeAsync(5_000);
    await cutting;
    await writes.close();
    expect(cut.told).toEqual(['gave up: stopping']);
  });
});
