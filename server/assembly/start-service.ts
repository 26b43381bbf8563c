import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { openDatabase, type OpenDatabase } from '../../db/open';
import { buildOpenApiDocument } from '../api/openapi';
import { createOAuthHandler } from '../mcp/oauth/oauth-routes';
import { listeningUrl } from './listening-url';
import { EventStreams } from '../domain/tasks/event-streams';
import { answerClientError } from '../http/client-error';
import { ConnectionHonouringResponse } from '../http/connection-close';
import { BrowserPool, createBrowserProvider } from '../browser';
import type { Config } from '../core/config';
import { holdDataDirectory } from '../domain/devices/data-directory-lock';
import { deviceStateStore } from '../domain/devices/device-state-store';
import { closeHostMetering, reconcileHostDevices, recordBrowserEvents } from '../domain/devices/device-upkeep';
import { releaseHostLeases } from '../domain/tasks/task-lease';
import { hostHeartbeat } from '../jobs/host-heartbeat';
import { loadHostId } from '../domain/devices/host-id';
import { registerHost } from '../domain/hosts/host-registry';
import { Authenticator } from '../domain/keys/authenticate';
import { keyRecordLoader, lastUsedRecorder } from '../domain/keys/key-record';
import { KEY_REVOKED_CHANNEL, KeyRevocations } from '../domain/keys/key-revocations';
import { CursorCodec } from '../domain/pagination/cursor';
import { LimiterStore } from '../domain/rate-limit/limiter-store';
import { RateLimiter } from '../domain/rate-limit/rate-limiter';
import { loadServiceSecret } from '../domain/service-secret';
import { resealCredentials } from '../domain/credentials/reseal-credentials';
import { SecretBox } from '../domain/credentials/secret-box';
import { GENERATED_KEY_FILE, resolveSecretsKey } from '../domain/credentials/secrets-key';
import { Notifications } from '../domain/channels/notifications';
import { SESSION_CHANNEL } from '../domain/channels/session-channel';
import { TASK_CHANNEL, TaskChannel } from '../domain/channels/task-channel';
import { OUTBOX_CHANNEL } from '../domain/events/emit-event';
import { TaskStepFeeds } from '../domain/tasks/task-step-feeds';
import { CdpGateway } from '../gateway/cdp-gateway';
import { DeviceViews } from '../gateway/device-views';
import type { ReconnectReason } from '../gateway/device-socket-gateway';
import { SessionGateway } from '../gateway/session-gateway';
import { Recorder } from '../artifacts/recorder';
import { openObjectStore, RetryingWrites } from '../storage';
import { AuthFailureThrottle } from '../domain/rate-limit/auth-failure-throttle';
import { clientAddress, TrustedProxies } from '../http/client-address';
import { createRequestRouter, createUpgradeRouter, type Readiness } from './entry-points';
import { ServiceMetrics } from '../metrics/service-metrics';
import { deviceAdoption, deviceIdleSuspend, deviceMeteringHeartbeat } from '../jobs/device-workers';
import { escalationDeliveryWorker, escalationExpiry } from '../jobs/escalation-worker';
import { retentionSweep } from '../jobs/retention-sweep';
import { sessionUpkeep } from '../jobs/session-upkeep';
import { taskRunner } from '../jobs/task-runner';
import { webhookDeliveryWorker } from '../jobs/webhook-delivery';
import type { Worker } from '../jobs/worker';
import { createLogger } from '../core/log';
import { DatabaseAvailability } from '../core/database-availability';
import { startConsole } from './next-console';
import type { FileLock } from '../os/file-lock';
import type { Services } from '../services/services';
import { planBrowserEgress } from '../browser';
import { EgressPolicy } from '../net/egress-policy';
import { EgressProxy } from '../net/egress-proxy';
import { EGRESS_CREDENTIAL_SECRET, EgressCredentials } from '../net/egress-credentials';
import { loadEgressPort, saveEgressPort } from '../net/egress-port';

/**
 * How a stop leaves the devices' browsers: `handover` lets go of them, each still running
 * under its keeper for the next start on this data directory to re-attach (a deploy:
 * SIGTERM); `shutdown` closes them for good (Ctrl-C, a retired host, tests).
 */
export type StopMode = 'handover' | 'shutdown';

export interface RunningService {
  server: Server;
  /** Base URL the server listens on, e.g. http://127.0.0.1:3000. */
  url: string;
  services: Services;
  database: OpenDatabase;
  /**
   * Graceful stop: no new connections, in-flight requests finish, workers stop. `handover`
   * (a deploy) leaves running tasks to the next service of this host; `shutdown` ends them
   * and closes the browsers. Live-view and CDP clients are closed with 1012 and reconnect.
   */
  close(mode?: StopMode): Promise<void>;
  /**
   * The device's browser leaves this instance (handed over to another): its live-view and
   * CDP clients here are closed with 1012 and reconnect to wherever it runs next.
   * `deviceId` is the device's row id (devices.id), not its public `dev_` id.
   */
  closeForDevice(deviceId: string, reason: ReconnectReason): void;
}


// How long shutdown waits for in-flight requests before cutting connections.
const SHUTDOWN_GRACE_MS = 10_000;
/** A flood of connections over the limit is said once in this long, not once per connection. */
const DROPPED_WARNING_MS = 60_000;

/** Where the log goes instead of stdout (tests read it back). */
export interface StartOptions {
  logDestination?: { write(line: string): void };
}

/**
 * The composition root: builds every dependency once, starts the HTTP server (API,
 * console, WebSocket upgrades) and the background workers on one port.
 */
export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  // One process per data directory (the host), held until close() or until this process dies.
  const dataDirectory = await holdDataDirectory(config.dataDir);
  try {
    return await startOnDataDirectory(config, dataDirectory, options);
  } catch (error) {
    dataDirectory.release();
    throw error;
  }
}

async function startOnDataDirectory(config: Config, dataDirectory: FileLock, options: StartOptions): Promise<RunningService> {
  const log = createLogger(config.logLevel, options.logDestination);
  // Before anything starts: a deployment that would leave devices' egress unenforced is refused.
  const egress = planBrowserEgress(config.browser, { proxyHost: config.egress.proxyHost, internalUrl: config.http.internalUrl, enforcedElsewhere: config.egress.enforcedElsewhere });
  if (egress.warning !== null) log.warn(egress.warning);
  let ready = false;
  // The vault's key before the database: a deployment without one is refused before anything starts.
  const secretsKey = await resolveSecretsKey(config.secrets.current, config.db.url === null, config.dataDir);
  if (secretsKey.origin === 'generated') {
    log.warn({ file: path.join(config.dataDir, GENERATED_KEY_FILE) }, 'no OPERATOR_SECRETS_KEY: generated one for the credential vault into the data directory; back it up with the database');
  }
  const database = await openDatabase(config.db, (line) => log.debug({ component: 'embedded-postgres' }, line));
  const secrets = new SecretBox(secretsKey.key, config.secrets.previous);
  try {
    const resealed = await resealCredentials(database.db, secrets);
    if (resealed > 0) log.info({ credentials: resealed }, 'credential vault re-encrypted under OPERATOR_SECRETS_KEY; OPERATOR_SECRETS_KEY_PREVIOUS may be removed once every instance runs with the new key');
  } catch (error) {
    await database.close();
    throw error;
  }
  const egressProxy = await EgressProxy.start(new EgressPolicy(config.egress), {
    host: egress.listenHost,
    dialHost: egress.dialHost === egress.listenHost ? undefined : egress.dialHost,
    credentials: egress.perDeviceCredentials ? new EgressCredentials(await loadServiceSecret(database.db, EGRESS_CREDENTIAL_SECRET)) : undefined,
    preferredPort: config.egress.proxyPort ?? (await loadEgressPort(config.dataDir)),
    portRequired: config.egress.proxyPort !== null,
  });
  await saveEgressPort(config.dataDir, egressProxy.port);
  const browserProvider = createBrowserProvider({
    kind: config.browser.kind,
    chromiumPath: config.browser.chromiumPath,
    browserlessUrl: config.browser.browserlessUrl,
    dataDir: config.dataDir,
    egress: egress.throughProxy ? egressProxy : null,
    deviceStates: deviceStateStore(database.db),
    browserUsers: config.browser.users,
    allowUnsandboxed: config.browser.allowUnsandboxed,
    keepSecs: config.browser.keepSecs,
  });
  try {
    // Fail at start, with one clear line, rather than at the first device create.
    for (const warning of await browserProvider.start()) log.warn(warning);
  } catch (error) {
    await egressProxy.close();
    await database.close();
    throw error;
  }
  const limiterStore = LimiterStore.open(config.rateLimit.store, database.url);
  const store = openObjectStore(config.storage);
  log.info({ storage: store.description }, 'artifact storage');
  const writes = new RetryingWrites(store, log);
  const hostId = await loadHostId(config.dataDir);
  const browserPool = new BrowserPool(browserProvider, {
    maxBrowsers: config.browser.maxBrowsers,
    warmBrowsers: config.browser.warmBrowsers,
    onWarmLaunchFailed: (error) => log.error({ err: error }, 'a warm browser failed to start'),
  });
  // One screencast per device, shared by live-view sockets and recordings.
  const deviceViews = new DeviceViews(browserPool);
  const databaseAvailability = new DatabaseAvailability(() => database.sql`select 1`, log);
  // Every channel this process listens on, on its one LISTEN connection.
  const notifications = await Notifications.start(
    database.sql,
    [TASK_CHANNEL, KEY_REVOKED_CHANNEL, SESSION_CHANNEL, OUTBOX_CHANNEL],
    databaseAvailability.reportingOthers((error) => log.error({ err: error }, 'notification handling failed')),
  );
  const trustedProxies = new TrustedProxies(config.http.trustedProxies);
  const services: Services = {
    config,
    db: database.db,
    sql: database.sql,
    log,
    databaseAvailability,
    instanceId: `${process.pid}-${randomUUID().slice(0, 8)}`,
    hostId,
    browserPool,
    authenticator: new Authenticator(keyRecordLoader(database.db), lastUsedRecorder(database.db)),
    rateLimiter: RateLimiter.create(config.rateLimit, limiterStore),
    authThrottle: AuthFailureThrottle.create(config.limits.authFailures, (req) => clientAddress(req, trustedProxies), limiterStore),
    cursors: new CursorCodec(await loadServiceSecret(database.db, 'cursor_hmac_secret')),
    secrets,
    notifications,
    taskChannel: new TaskChannel(notifications),
    keyRevocations: new KeyRevocations(notifications, database.db, databaseAvailability.reportingOthers((error) => log.error({ err: error }, 'key revocation check failed'))),
    store,
    writes,
    recorder: new Recorder({ db: database.db, databaseAvailability, writes, frames: deviceViews, hostId, dataDir: config.dataDir, fps: config.artifacts.recordingFps, encodeLiveAfterMs: config.artifacts.recordingDeferMs, log }),
  };
  services.keyRevocations.onAnyRevoked((keyId) => services.authenticator.forgetKey(keyId));
  // A deleted device's browser lives until what records its page has a frame to keep.
  services.browserPool.waitBeforeDestroy((deviceId) => services.recorder.untilFramed(deviceId));

  const deviceWritesSettled = recordBrowserEvents(services, (write) => databaseAvailability.retryWhileUnreachable(write));
  await reconcileHostDevices(services);
  // The tasks a previous process of this host was driving continue here, at once.
  const continued = await releaseHostLeases(services.db, hostId, services.instanceId);
  if (continued.length > 0) log.info({ taskIds: continued }, 'tasks of the previous service of this host continue here');
  // What a crash left recording here is stored (or marked failed) before new runs start.
  await services.recorder.recover();
  services.recorder.prepare();
  // After the devices this host brings back: they have the first claim on its capacity.
  services.browserPool.startWarmBrowsers();

  const runner = taskRunner(services);
  const workers: Worker[] = [hostHeartbeat(services), deviceAdoption(services), retentionSweep(services), deviceIdleSuspend(services), deviceMeteringHeartbeat(services), runner, webhookDeliveryWorker(services), escalationDeliveryWorker(services), escalationExpiry(services), sessionUpkeep(services)];
  const eventStreams = new EventStreams(config.limits.eventStreamsPerKey);
  const stepFeeds = new TaskStepFeeds(services.db, services.taskChannel, config.http.publicUrl);
  const gateway = new SessionGateway(services, deviceViews);
  gateway.start();
  const cdpGateway = new CdpGateway(services);
  await cdpGateway.start();
  const closeForDevice = (deviceId: string, reason: ReconnectReason) => [gateway, cdpGateway].forEach((each) => each.closeForDevice(deviceId, reason));
  // A device another host adopted: whoever watched or drove it here reconnects to it there.
  services.browserPool.onDeviceHandedOff((deviceId) => closeForDevice(deviceId, 'service_restart'));
  const nextConsole = config.http.serveConsole ? await startConsole() : null;
  const metrics = new ServiceMetrics({
    db: database.db,
    pool: { applicationName: database.applicationName, size: config.db.poolSize },
    hostId: services.hostId,
    browsers: () => ({ inUse: services.browserPool.size, capacity: services.browserPool.capacity, warm: services.browserPool.warmReady }),
    liveViewSockets: () => gateway.socketCount,
  });
  const readiness = async (): Promise<Readiness> => {
    if (!ready) return { ok: false, reason: 'starting_or_stopping' };
    if (!databaseAvailability.reachable || !(await databaseAvailability.answersWithin(READINESS_TIMEOUT_MS))) return { ok: false, reason: 'database_unreachable' };
    if (!(await services.browserPool.isProviderReachable())) return { ok: false, reason: 'browser_provider_unreachable' };
    return { ok: true };
  };
  const route = createRequestRouter({
    services,
    stepFeeds,
    eventStreams,
    openApiDocument: () => buildOpenApiDocument(config.http.publicUrl),
    readiness,
    metrics,
    oauth: createOAuthHandler(services),
    console: nextConsole?.handle ?? null,
  });

  // Every answer honours a client's `Connection: close` (connection-close.ts).
  const server = createServer({ ServerResponse: ConnectionHonouringResponse }, (req: IncomingMessage, res: ServerResponse) => {
    route(req, res).catch((error: unknown) => {
      log.error({ err: error }, 'request failed outside a route handler');
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end();
    });
  });
  // Connections are a shared resource like any other: past the limit Node closes a new one
  // at once, before it is read, so a flood of idle or slow connections cannot take the
  // process's file descriptors from its database, browsers and recordings.
  server.maxConnections = config.limits.connections;
  let droppedWarnedAt = 0;
  server.on('drop', () => {
    if (Date.now() - droppedWarnedAt < DROPPED_WARNING_MS) return;
    droppedWarnedAt = Date.now();
    log.warn({ limit: config.limits.connections }, 'connections over OPERATOR_MAX_CONNECTIONS closed unanswered');
  });
  server.on('clientError', answerClientError(log));
  server.on('upgrade', createUpgradeRouter({ liveView: gateway, cdp: cdpGateway, console: nextConsole?.upgrade ?? null }));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.http.port, config.http.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = listeningUrl(address);
  await registerHost(services.db, services.hostId, config.http.internalUrl ?? url);
  for (const worker of workers) worker.start();
  ready = true;
  log.info({ url, publicUrl: config.http.publicUrl }, 'service listening');

  let closing: Promise<void> | null = null;
  return {
    server,
    url,
    services,
    database,
    closeForDevice,
    close(mode: StopMode = 'shutdown') {
      closing ??= (async () => {
        ready = false;
        // What waits for the database to come back gives up: a stop must not hang on an outage.
        databaseAvailability.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Event streams would hold the server open; their clients resume with after_seq.
        eventStreams.endAll();
        // So would live-view and CDP sockets: closed with 1012, their clients reconnect to the
        // next instance with the same token or cdp_url (CDP sessions keep their slots meanwhile).
        await gateway.close();
        await cdpGateway.close();
        const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        await closed;
        clearTimeout(grace);
        await Promise.all(workers.map((worker) => (worker === runner && mode === 'handover' ? runner.handOver() : worker.stop())));
        // Live-view sessions' recordings; the task runs' ended with the runs, CDP sessions' with their connections.
        await services.recorder.stopAll();
        // Writes still waiting for the store are given up: a recording's file stays for the next start.
        await writes.close();
        // Devices stay `active` in the database (a restart re-attaches or relaunches
        // them); their metering stops here and starts again with the next start's.
        await closeHostMetering(services);
        if (mode === 'handover') await services.browserPool.detach();
        else await services.browserPool.shutdown();
        await egressProxy.close();
        await deviceWritesSettled();
        await limiterStore.close();
        services.taskChannel.close();
        services.keyRevocations.close();
        await notifications.close();
        await nextConsole?.close();
        await database.close();
        dataDirectory.release();
      })();
      return closing;
    },
  };
}

// A readiness probe must not hang on a stuck database: past this it answers 503.
const READINESS_TIMEOUT_MS = 1_000;
