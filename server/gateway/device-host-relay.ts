import { deviceHostId } from '../domain/hosts/device-host';
import { hostInternalUrl } from '../domain/hosts/host-registry';
import type { Services } from '../services/services';
import { openRelay, RelayRefused, type Relay } from './session-relay';

/**
 * The same socket opened on the instance that runs the device's browser, for the live-view
 * and the CDP gateways alike; null when that instance is this one or there is none (the
 * device is nowhere). A host that refuses the handshake throws RelayRefused, which the
 * caller answers as that host did; a registered host that does not answer is down, and so
 * is the browser: null.
 */
export async function relayToDeviceHost(
  services: Services,
  deviceId: string,
  pathAndQuery: string,
  protocols: string[],
  what: string,
  /** The client's Sec-WebSocket-Key, for a gateway that admits a connection by it. */
  clientKey?: string,
): Promise<Relay | null> {
  const hostId = await deviceHostId(services.db, deviceId);
  if (hostId === null || hostId === services.hostId) return null;
  const target = await hostInternalUrl(services.db, hostId);
  if (target === null) return null;
  try {
    return await openRelay(target, pathAndQuery, protocols, clientKey);
  } catch (error) {
    if (error instanceof RelayRefused) throw error;
    services.log.warn({ err: error, hostId }, `could not relay ${what} to its device host`);
    return null;
  }
}
