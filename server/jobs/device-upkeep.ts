import { heartbeatDevices, suspendIdleDevices } from '../domain/devices/device-upkeep';
import type { Services } from '../services';
import { periodicWorker, type Worker } from './worker';

/** Puts idle devices to sleep; checked every sweep, so suspend lags by at most one interval. */
export function deviceIdleSuspend(services: Services): Worker {
  return periodicWorker(
    'device-idle-suspend',
    services.config.sweepIntervalMs,
    async () => {
      await suspendIdleDevices(services);
    },
    (error) => services.log.error({ err: error }, 'device idle suspend failed'),
  );
}

/**
 * Stamps open metering periods every sweep: after a crash, a period is closed at its
 * last stamp, so lost time is bounded by one sweep interval.
 */
export function deviceMeteringHeartbeat(services: Services): Worker {
  return periodicWorker(
    'device-metering-heartbeat',
    services.config.sweepIntervalMs,
    () => heartbeatDevices(services),
    (error) => services.log.error({ err: error }, 'device metering heartbeat failed'),
  );
}
