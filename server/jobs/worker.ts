import { PeriodicTimer } from '../domain/periodic-timer';

/** A background loop owned by the server process; stopped before the database closes. */
export interface Worker {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
}

/** A worker that is only a sweep: `tick` on a PeriodicTimer. */
export function periodicWorker(name: string, intervalMs: number, tick: () => Promise<void>, onError: (error: unknown) => void): Worker {
  const timer = new PeriodicTimer(intervalMs, tick, onError);
  return { name, start: () => timer.start(), stop: () => timer.stop() };
}
