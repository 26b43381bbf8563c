import { adoptDevicesOfDeadHosts } from '../domain/devices/device-adoption';
import { releaseLeasesOfDeadDriver } from '../domain/tasks/task-lease';
import { HOST_DEAD_MS, HOST_HEARTBEAT_MS } from '../domain/hosts/host-registry';
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

/**
 * Takes over the devices of dead hosts whose browsers outlive their machine (browserless),
 * as many as this host's pool has room for, checked as often as hosts write heartbeats,
 * so a device's task continues within about HOST_DEAD_MS plus two intervals.
 */
export function deviceAdoption(services: Services): Worker {
  return periodicWorker(
    'device-adoption',
    HOST_HEARTBEAT_MS,
    async () => {
      // After a database outage every host's heartbeat is stale: live hosts first get the
      // time a dead one needs to look dead, to write theirs again.
      if (services.databaseAvailability.reachableForMs() < HOST_DEAD_MS) return;
      const adopted = await adoptDevicesOfDeadHosts(services, services.browserPool.capacity - services.browserPool.size);
      if (adopted.length === 0) return;
      services.log.warn({ deviceIds: adopted }, 'adopted the devices of a host that stopped answering');
      // Their tasks continue here at once, rather than once the dead host's leases run out.
      await releaseLeasesOfDeadDriver(services.db, adopted, services.instanceId);
    },
    services.databaseAvailability.reportingOthers((error) => services.log.error({ err: error }, 'device adoption failed')),
  );
}
