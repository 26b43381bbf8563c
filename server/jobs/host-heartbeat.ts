import { heartbeatHost, HOST_HEARTBEAT_MS } from '../domain/hosts/host-registry';
import type { Services } from '../services/services';
import { periodicWorker, type Worker } from './worker';

/**
 * Tells the other instances this host's service is alive (hosts.heartbeat_at): a silent
 * host's devices on a shared browser pool are adopted, and once it has been silent for
 * longer than browsers outlive their service, its tasks are failed.
 */
export function hostHeartbeat(deps: Pick<Services, 'db' | 'hostId' | 'log' | 'databaseAvailability'>): Worker {
  return periodicWorker(
    'host-heartbeat',
    HOST_HEARTBEAT_MS,
    () => heartbeatHost(deps.db, deps.hostId),
    deps.databaseAvailability.reportingOthers((error) => deps.log.warn({ err: error }, 'host heartbeat failed')),
  );
}
