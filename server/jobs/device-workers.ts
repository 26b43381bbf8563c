import { closeStrayBrowsers, failAbandonedCreates, heartbeatDevices, suspendIdleDevices } from '../domain/devices/device-upkeep';
import type { Services } from '../services/services';
import { periodicWorker, type Worker } from './worker';

/**
 * Puts idle devices to sleep, closes browsers of devices another instance deleted or
 * slept, and fails creates a vanished host abandoned; checked every sweep, so each lags
 * by at most one interval.
 */
export function deviceIdleSuspend(services: Services): Worker {
  return periodicWorker(
    'device-idle-suspend',
    services.config.sweepIntervalMs,
    async () => {
      await suspendIdleDevices(services);
      const strays = await closeStrayBrowsers(services);
      if (strays > 0) services.log.info({ strays }, 'closed browsers of devices deleted, slept or moved by another instance');
      const abandoned = await failAbandonedCreates(services);
      if (abandoned > 0) services.log.warn({ abandoned }, 'devices left creating by a host that never came back were moved to error');
    },
    services.databaseAvailability.reportingOthers((error) => services.log.error({ err: error }, 'device idle suspend failed')),
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
    services.databaseAvailability.reportingOthers((error) => services.log.error({ err: error }, 'device metering heartbeat failed')),
  );
}
