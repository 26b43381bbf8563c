import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PeriodicTimer } from './periodic-timer';

const INTERVAL_MS = 1_000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A tick that ends when the test calls `endTick()`. */
function slowTick() {
  let endTick: () => void = () => undefined;
  const state = { ticks: 0 };
  const tick = () => {
    state.ticks += 1;
    return new Promise<void>((resolve) => {
      endTick = resolve;
    });
  };
  return { tick, state, endTick: () => endTick() };
}

describe('PeriodicTimer', () => {
  it('ticks one interval after start, then one interval after each tick ended', async () => {
    const { tick, state, endTick } = slowTick();
    const timer = new PeriodicTimer(INTERVAL_MS, tick, () => undefined);
    timer.start();

    await vi.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(state.ticks).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.ticks).toBe(1);

    // A tick that outlasts several intervals is never joined by another.
    await vi.advanceTimersByTimeAsync(5 * INTERVAL_MS);
    expect(state.ticks).toBe(1);
    endTick();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(state.ticks).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.ticks).toBe(2);
    const stopping = timer.stop();
    endTick();
    await stopping;
  });

  it('reports a failed tick and keeps ticking', async () => {
    const errors: unknown[] = [];
    const boom = new Error('boom');
    let ticks = 0;
    const timer = new PeriodicTimer(
      INTERVAL_MS,
      () => {
        ticks += 1;
        if (ticks === 1) throw boom;
        return Promise.reject(boom);
      },
      (error) => errors.push(error),
    );
    timer.start();

    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    expect(ticks).toBe(3);
    expect(errors).toEqual([boom, boom, boom]);
    await timer.stop();
  });

  it('stop waits for the tick in progress and no tick follows', async () => {
    const { tick, state, endTick } = slowTick();
    const timer = new PeriodicTimer(INTERVAL_MS, tick, () => undefined);
    timer.start();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(state.ticks).toBe(1);

    let stopped = false;
    const stopping = timer.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(stopped).toBe(false);
    endTick();
    await stopping;

    await vi.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(state.ticks).toBe(1);
  });

  it('stopped before its first tick, never ticks', async () => {
    const { tick, state } = slowTick();
    const timer = new PeriodicTimer(INTERVAL_MS, tick, () => undefined);
    timer.start();
    await timer.stop();
    await vi.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(state.ticks).toBe(0);
  });

  it('does not keep the process alive', () => {
    const timer = new PeriodicTimer(INTERVAL_MS, () => undefined, () => undefined);
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    timer.start();
    const handle = setTimeoutSpy.mock.results[0]!.value as NodeJS.Timeout;
    expect(handle.hasRef()).toBe(false);
    void timer.stop();
  });
});
