import { SERVICE_RESTART_CLOSE } from '../../shared/reconnect-on-restart';

/**
 * The close frames that ask a client to open its socket again with the same URL or token
 * (docs/api.md), by why the service closed it; the live-view and CDP gateways both send
 * them, and the clients' side of it is shared/reconnect-on-restart.ts.
 */
export const RECONNECT_CLOSES = {
  /** This instance stops, or hands the device over to another instance. */
  service_restart: SERVICE_RESTART_CLOSE,
} as const;

export type ReconnectReason = keyof typeof RECONNECT_CLOSES;
