/** A background loop owned by the server process; stopped before the database closes. */
export interface Worker {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Runs `tick` every `intervalMs` (never overlapping itself) until stopped. Errors are
 * reported and the loop goes on: one bad tick must not stop a sweep for good.
 */
export function periodicWorker(name: string, intervalMs: number, tick: () => Promise<void>, onError: (error: unknown) => void): Worker {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick()
        .catch(onError)
        .finally(() => {
          running = null;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  return {
    name,
    start: schedule,
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await running;
    },
  };
}
