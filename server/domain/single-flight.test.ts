import { setImmediate as settle } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SingleFlight } from './single-flight';

/**
 * A job whose runs end when the test says: run i ends with `finish(i)` (or `fail(i, error)`).
 * It counts runs and the most that were ever going at once.
 */
function controlledJob() {
  const ends: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  let going = 0;
  const state = { runs: 0, mostAtOnce: 0 };
  const job = () => {
    state.runs += 1;
    going += 1;
    state.mostAtOnce = Math.max(state.mostAtOnce, going);
    return new Promise<void>((resolve, reject) => ends.push({ resolve, reject })).finally(() => {
      going -= 1;
    });
  };
  return {
    job,
    state,
    async finish(run: number) {
      ends[run]!.resolve();
      await settle();
    },
    async fail(run: number, error: unknown) {
      ends[run]!.reject(error);
      await settle();
    },
  };
}

function collectErrors() {
  const errors: unknown[] = [];
  return { errors, onError: (error: unknown) => errors.push(error) };
}

describe('SingleFlight', () => {
  it('starts a run at once when woken idle, and a new one for a wake after it ended', async () => {
    const { job, state, finish } = controlledJob();
    const flight = new SingleFlight(job, collectErrors().onError);

    flight.wake();
    expect(state.runs).toBe(1);
    await finish(0);
    expect(state.runs).toBe(1);

    flight.wake();
    expect(state.runs).toBe(2);
  });

  it('turns any number of wakes during a run into exactly one more run, after it, never beside it', async () => {
    const { job, state, finish } = controlledJob();
    const flight = new SingleFlight(job, collectErrors().onError);

    flight.wake();
    for (let i = 0; i < 5; i += 1) flight.wake();
    expect(state.runs).toBe(1);

    await finish(0);
    expect(state.runs).toBe(2);
    await finish(1);
    expect(state.runs).toBe(2);
    expect(state.mostAtOnce).toBe(1);
  });

  it('reports a failed run and goes on: a wake during it still gets its run, and later wakes too', async () => {
    const { job, state, finish, fail } = controlledJob();
    const { errors, onError } = collectErrors();
    const flight = new SingleFlight(job, onError);
    const boom = new Error('boom');

    flight.wake();
    flight.wake();
    await fail(0, boom);
    expect(errors).toEqual([boom]);
    expect(state.runs).toBe(2);

    await finish(1);
    flight.wake();
    expect(state.runs).toBe(3);
  });

  it('runs a job that wakes its own flight once more afterwards, not beside itself', async () => {
    let runs = 0;
    let going = 0;
    let mostAtOnce = 0;
    const flight: SingleFlight = new SingleFlight(async () => {
      runs += 1;
      going += 1;
      mostAtOnce = Math.max(mostAtOnce, going);
      if (runs === 1) flight.wake();
      await settle();
      going -= 1;
    }, collectErrors().onError);

    flight.wake();
    for (let i = 0; i < 5; i += 1) await settle();
    expect({ runs, mostAtOnce }).toEqual({ runs: 2, mostAtOnce: 1 });
  });

  it('stop waits for the run in progress, does not run it again, and refuses later wakes', async () => {
    const { job, state, finish } = controlledJob();
    const flight = new SingleFlight(job, collectErrors().onError);

    flight.wake();
    flight.wake();
    let stopped = false;
    const stopping = flight.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);

    await finish(0);
    await stopping;
    expect(stopped).toBe(true);
    expect(state.runs).toBe(1);

    flight.wake();
    expect(state.runs).toBe(1);
  });
});
