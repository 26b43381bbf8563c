import type postgres from 'postgres';
import type { Db } from '../../db/client';
import type { BrowserPool } from '../browser';
import type { Config } from '../core/config';
import type { DatabaseAvailability } from '../core/database-availability';
import type { Authenticator } from '../domain/keys/authenticate';
import type { KeyRevocations } from '../domain/keys/key-revocations';
import type { CursorCodec } from '../domain/pagination/cursor';
import type { SecretBox } from '../domain/credentials/secret-box';
import type { RateLimiter } from '../domain/rate-limit/rate-limiter';
import type { Notifications } from '../domain/channels/notifications';
import type { TaskChannel } from '../domain/channels/task-channel';
import type { AuthFailureThrottle } from '../domain/rate-limit/auth-failure-throttle';
import type { Logger } from '../core/log';
import type { Recorder } from '../artifacts/recorder';
import type { ObjectStore, RetryingWrites } from '../storage';

/**
 * Everything a request or a worker may use, built once by the composition root
 * (server/service.ts) and handed down through the tRPC context: no module imports a
 * global database client or reads the environment itself.
 */
export interface Services {
  config: Config;
  db: Db;
  sql: postgres.Sql;
  log: Logger;
  /** Whether the database answers right now: workers note outages there and wait for its return. */
  databaseAvailability: DatabaseAvailability;
  /** Identifies this server process among instances sharing the database. */
  instanceId: string;
  /**
   * Identifies this host's data directory (browser profiles) across restarts; devices
   * whose host_id matches run their browsers in this process's pool.
   */
  hostId: string;
  /** Running device browsers, one per device, bounded by config.browser.maxBrowsers. */
  browserPool: BrowserPool;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  /** Failed authentications per client address, on every bearer entrance. */
  authThrottle: AuthFailureThrottle;
  cursors: CursorCodec;
  /** Seals and opens the credential vault's secrets (OPERATOR_SECRETS_KEY). */
  secrets: SecretBox;
  /** This process's one LISTEN connection: every NOTIFY channel is subscribed to through it. */
  notifications: Notifications;
  /** Task changes, fanned out to event streams and the task worker. */
  taskChannel: TaskChannel;
  /** Key revocations: event streams of a revoked key end. */
  keyRevocations: KeyRevocations;
  /** Recordings, step screenshots and downloaded files (OPERATOR_STORAGE_URL). */
  store: ObjectStore;
  /** Writes of recordings and step screenshots to `store` that outlast its outages. */
  writes: RetryingWrites;
  /** Records task runs, live-view sessions and CDP connections of devices whose browser runs here. */
  recorder: Recorder;
}
