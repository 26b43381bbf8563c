import { dropLapsedHolds } from '../domain/sessions/session-operations';
import type { Services } from '../services/services';
import { periodicWorker, type Worker } from './worker';

// A hold lasts minutes; dropping it within a second of its end is prompt enough.
const TICK_MS = 1_000;

/** Drops takeover holds that lapsed (300 s, or their session ended), resuming the tasks. */
export function sessionUpkeep(services: Services): Worker {
  return periodicWorker(
    'session-upkeep',
    TICK_MS,
    async () => {
      const dropped = await dropLapsedHolds(services);
      if (dropped > 0) services.log.info({ dropped }, 'takeover holds lapsed; their tasks resumed');
    },
    services.databaseAvailability.reportingOthers((error) => services.log.error({ err: error }, 'session upkeep failed')),
  );
}
