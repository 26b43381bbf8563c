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

  it('never starts a tick beside a slow async one, however often woken: one more follows it at once', async () => {
    let going = 0;
    let mostAtOnce = 0;
    const { tick, state, endTick } = slowTick();
    const timer = new PeriodicTimer(
      INTERVAL_MS,
      async () => {
        going += 1;
        mostAtOnce = Math.max(mostAtOnce, going);
        await tick();
        going -= 1;
      },
      () => undefined,
    );
    timer.start();
    timer.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(state.ticks).toBe(1);

    // Woken three times and past its interval while the tick runs: nothing starts beside it.
    timer.wake();
    timer.wake();
    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    timer.wake();
    expect(state.ticks).toBe(1);
    endTick();
    await vi.advanceTimersByTimeAsync(0);
    expect(state.ticks).toBe(2);
    expect(mostAtOnce).toBe(1);

    // That one tick answered every wake: the next comes one interval after it ends.
    endTick();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(state.ticks).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.ticks).toBe(3);
    expect(mostAtOnce).toBe(1);
    const stopping = timer.stop();
    endTick();
    await stopping;
  });

  it('ticks again as soon as a tick asks, never later than the interval', async () => {
    const asks = [250, 5 * INTERVAL_MS, 100];
    const at: number[] = [];
    const started = Date.now();
    const timer = new PeriodicTimer(
      INTERVAL_MS,
      () => {
        at.push(Date.now() - started);
        return asks.shift();
      },
      () => undefined,
    );
    timer.start();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS + 250 + INTERVAL_MS + 100 + INTERVAL_MS);
    // 1000: asks 250; 1250: asks 5000, capped at 1000; 2250: asks 100; 2350: asks nothing, so the interval.
    expect(at).toEqual([INTERVAL_MS, INTERVAL_MS + 250, 2 * INTERVAL_MS + 250, 2 * INTERVAL_MS + 350, 3 * INTERVAL_MS + 350]);
    await timer.stop();
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
    // Node's own setTimeout: a spy of the fake one outlives the fake timers, stalling the
    // next test file the worker runs.
    vi.useRealTimers();
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    try {
      timer.start();
      const handle = setTimeoutSpy.mock.results[0]!.value as NodeJS.Timeout;
      expect(handle.hasRef()).toBe(false);
    } finally {
      setTimeoutSpy.mockRestore();
      void timer.stop();
    }
  });
});
