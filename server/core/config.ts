import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { parseStorageUrl } from './storage-url';

// The environment is parsed once, here. Nothing else in the codebase reads process.env:
// every other module receives the part of `Config` it needs.

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((value) => value === 'true' || value === '1');

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? null : value.trim()));

const csv = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((value) =>
      (value ?? fallback)
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    );

/** An IP address or a CIDR range (`10.0.0.0/8`, `fd00::/8`). */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** An id a process may run as: neither root nor the 32-bit "no id" value. */
const unprivilegedIdNumber = z.number().int().min(1).max(4294967294);
const unprivilegedId = z.coerce.number().pipe(unprivilegedIdNumber);

/** "<first>-<last>", inclusive. */
const idRange = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine((value) => /^\d+-\d+$/.test(value.trim()), { message: 'expected <first>-<last>, e.g. 60601-60999' })
    .transform((value) => value.trim().split('-').map(Number) as [number, number])
    .pipe(z.tuple([unprivilegedIdNumber, unprivilegedIdNumber]).refine(([first, last]) => first <= last, { message: 'the first id exceeds the last' }));

/** Prices in micro-units of currency per unit; unset means unpriced (no `cost_micro`). */
const price = z.coerce.number().int().nonnegative().optional();

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  OPERATOR_PUBLIC_URL: optionalString,
  OPERATOR_INTERNAL_URL: optionalString,
  DATABASE_URL: optionalString,
  OPERATOR_DATA_DIR: z.string().default('.data'),
  OPERATOR_EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  OPERATOR_DB_POOL_SIZE: positiveInt(20),
  OPERATOR_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  OPERATOR_BROWSER: z.enum(['local', 'browserless']).default('local'),
  CHROMIUM_PATH: optionalString,
  BROWSERLESS_URL: optionalString,
  OPERATOR_MAX_BROWSERS: positiveInt(10),
  OPERATOR_WARM_BROWSERS: z.coerce.number().int().nonnegative().default(2),
  OPERATOR_ALLOW_UNSANDBOXED_BROWSER: booleanFromEnv,
  OPERATOR_BROWSER_KEEP_SECS: positiveInt(300),
  // How long a running task waits out an unreachable database before it fails with service_unavailable.
  OPERATOR_DATABASE_GRACE_SECS: positiveInt(60),
  OPERATOR_RETIRE_ON_STOP: booleanFromEnv,
  // Ids no account uses: systemd leaves 60578-61183 unassigned.
  OPERATOR_BROWSER_UIDS: idRange('60601-60999'),
  OPERATOR_BROWSER_GID: unprivilegedId.default(60600),
  OPERATOR_REGIONS: csv('local'),

  OPERATOR_MODEL_BASE_URL: optionalString,
  OPERATOR_MODEL_API_KEY: optionalString,
  OPERATOR_MODEL: optionalString,
  // Bad model replies in a row the agent sends back for another try; 0 fails at the first.
  OPERATOR_MODEL_MAX_CORRECTIONS: z.coerce.number().int().min(0).max(20).default(3),
  // Budget of one planning request, in estimated tokens (model-prompt.ts says how they are counted).
  OPERATOR_MODEL_CONTEXT_TOKENS: z.coerce.number().int().min(8000).default(24_000),
  OPERATOR_MODEL_SCREENSHOTS: booleanFromEnv,
  OPERATOR_TASK_TIMEOUT_SECS: positiveInt(1800),
  OPERATOR_TASK_LEASE_SECS: positiveInt(15),
  OPERATOR_TASK_WORKERS: positiveInt(10),
  // Bounds of the replay cache (docs/api.md "Task caches"): steps and bytes per entry, entries per organization.
  OPERATOR_TASK_CACHE_MAX_STEPS: positiveInt(200),
  OPERATOR_TASK_CACHE_MAX_BYTES: positiveInt(256 * 1024),
  OPERATOR_TASK_CACHE_MAX_ENTRIES: positiveInt(10_000),

  OPERATOR_ALLOW_PRIVATE_DESTINATIONS: booleanFromEnv,
  // With browserless on another machine and no internal address for the egress proxy
  // (below): true says the operator enforces the egress policy there; without it the
  // service refuses to start (server/browser/remote-browser-egress.ts).
  OPERATOR_EGRESS_ENFORCED_ELSEWHERE: booleanFromEnv,
  // Where browsers on other hosts reach the egress proxy: an address or a name (one that
  // reaches every instance keeps an adopted device's network); unset: OPERATOR_INTERNAL_URL's host.
  OPERATOR_EGRESS_PROXY_HOST: optionalString,
  // The egress proxy's port, the same on every instance when OPERATOR_EGRESS_PROXY_HOST
  // names them all; unset: any free port, kept in the data directory across restarts.
  OPERATOR_EGRESS_PROXY_PORT: z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().int().min(1).max(65535).optional()),
  // Exact address:port pairs devices may reach whatever the egress policy says; for tests
  // that serve one page on loopback while the rest of loopback stays closed.
  OPERATOR_TEST_ALLOW_DESTINATIONS: csv(''),
  OPERATOR_WEBHOOK_TIMEOUT_MS: positiveInt(10_000),
  // Delays after the 1st, 2nd, ... failure; the last repeats. A bad list would make every
  // retry fail to schedule, so it is refused at startup.
  OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: optionalString.refine((value) => value === null || /^\d+(\s*,\s*\d+)*$/.test(value), {
    message: 'expected comma-separated milliseconds, e.g. 50,100',
  }),
  OPERATOR_WEBHOOK_CONCURRENCY: positiveInt(32),
  OPERATOR_ESCALATION_TTL_SECS: positiveInt(3600),
  OPERATOR_TAKEOVER_HOLD_SECS: positiveInt(300),

  OPERATOR_RATE_LIMIT_PER_SEC: positiveInt(20),
  OPERATOR_RATE_LIMIT_BURST: positiveInt(40),
  OPERATOR_RATE_LIMIT_STORE: z.enum(['memory', 'postgres']).default('memory'),
  OPERATOR_AUTH_FAILURE_LIMIT: positiveInt(20),
  OPERATOR_AUTH_FAILURE_WINDOW_SECS: positiveInt(60),
  // A wrong entry would silently trust (or distrust) the wrong hop, so it is refused at startup.
  OPERATOR_TRUSTED_PROXIES: csv('').refine((entries) => entries.every(isAddressOrRange), {
    message: 'expected comma-separated IP addresses or CIDR ranges, e.g. 10.0.0.0/8,::1',
  }),
  OPERATOR_MAX_STREAMS_PER_KEY: positiveInt(10),
  OPERATOR_SESSION_MAX_SOCKETS: positiveInt(4),
  OPERATOR_SESSION_INPUT_QUEUE: positiveInt(64),
  OPERATOR_MAX_CONNECTIONS: positiveInt(4096),

  OPERATOR_PRICE_DEVICE_SECOND_MICRO: price,
  OPERATOR_PRICE_SESSION_SECOND_MICRO: price,
  OPERATOR_PRICE_TASK_MICRO: price,
  OPERATOR_PRICE_STEP_MICRO: price,
  OPERATOR_PRICE_INPUT_TOKEN_MICRO: price,
  OPERATOR_PRICE_OUTPUT_TOKEN_MICRO: price,

  OPERATOR_SWEEP_INTERVAL_MS: positiveInt(5_000),
  // Where recordings, step screenshots and downloaded files go (server/storage/storage-url.ts).
  OPERATOR_STORAGE_URL: optionalString,
  // Recordings, step screenshots and downloaded files are deleted this many days after their task or session ended.
  OPERATOR_ARTIFACT_RETENTION_DAYS: positiveInt(30),
  // Frames per second a recording keeps at most: ffmpeg's CPU grows with it.
  OPERATOR_RECORDING_FPS: z.coerce.number().int().min(1).max(30).default(5),
  // A recording that ends within this many seconds is encoded after its end, one encoding
  // at a time, not beside its browser; a longer one is encoded from then on as it goes. 0:
  // every recording is encoded as it goes.
  OPERATOR_RECORDING_DEFER_SECS: z.coerce.number().int().min(0).max(600).default(60),
  // Caps on what a task's `download` actions keep: per file, and all of one task's together.
  OPERATOR_DOWNLOAD_MAX_FILE_BYTES: positiveInt(50 * 1024 * 1024),
  OPERATOR_DOWNLOAD_MAX_TASK_BYTES: positiveInt(200 * 1024 * 1024),
  OPERATOR_METRICS_TOKEN: optionalString,
  // The credential vault's key (32 bytes, base64) and, while rotating, the one it replaces.
  OPERATOR_SECRETS_KEY: optionalString,
  OPERATOR_SECRETS_KEY_PREVIOUS: optionalString,
  // The stdio MCP server (`npm run mcp`), a client of a running service's REST API.
  OPERATOR_API_KEY: optionalString,
  OPERATOR_BASE_URL: optionalString,
  OPERATOR_SERVE_CONSOLE: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true'),
});

export type Env = z.input<typeof EnvSchema>;

/** Every variable the service reads; .env.example lists each with its default. */
export const ENV_VARIABLES = Object.keys(EnvSchema.shape) as Array<keyof Env>;

export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid configuration: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.OPERATOR_DATA_DIR);
  const publicUrl = (e.OPERATOR_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  if (e.OPERATOR_BROWSER === 'browserless' && e.BROWSERLESS_URL === null) {
    throw new Error('Invalid configuration: OPERATOR_BROWSER=browserless needs BROWSERLESS_URL.');
  }
  const [firstBrowserUid, lastBrowserUid] = e.OPERATOR_BROWSER_UIDS;
  if (lastBrowserUid - firstBrowserUid + 1 < e.OPERATOR_MAX_BROWSERS) {
    throw new Error('Invalid configuration: OPERATOR_BROWSER_UIDS must hold at least OPERATOR_MAX_BROWSERS uids (one per running browser).');
  }
  if (e.OPERATOR_BROWSER_GID >= firstBrowserUid && e.OPERATOR_BROWSER_GID <= lastBrowserUid) {
    throw new Error('Invalid configuration: OPERATOR_BROWSER_GID must lie outside OPERATOR_BROWSER_UIDS.');
  }
  const model =
    e.OPERATOR_MODEL_BASE_URL !== null && e.OPERATOR_MODEL !== null
      ? {
          baseUrl: e.OPERATOR_MODEL_BASE_URL,
          apiKey: e.OPERATOR_MODEL_API_KEY ?? '',
          model: e.OPERATOR_MODEL,
          maxCorrections: e.OPERATOR_MODEL_MAX_CORRECTIONS,
          contextTokens: e.OPERATOR_MODEL_CONTEXT_TOKENS,
          screenshots: e.OPERATOR_MODEL_SCREENSHOTS,
        }
      : null;
  return {
    http: {
      port: e.PORT,
      host: e.HOST,
      publicUrl,
      /** How other instances reach this one; null: derived from the listening address. */
      internalUrl: e.OPERATOR_INTERNAL_URL?.replace(/\/+$/, '') ?? null,
      serveConsole: e.OPERATOR_SERVE_CONSOLE,
      /** Reverse proxies whose X-Forwarded-For names the client; empty: the peer address is the client. */
      trustedProxies: e.OPERATOR_TRUSTED_PROXIES,
    },
    db: {
      url: e.DATABASE_URL,
      poolSize: e.OPERATOR_DB_POOL_SIZE,
      graceMs: e.OPERATOR_DATABASE_GRACE_SECS * 1000,
      embedded: { dir: path.join(dataDir, 'postgres'), port: e.OPERATOR_EMBEDDED_PG_PORT },
    },
    dataDir,
    logLevel: e.OPERATOR_LOG_LEVEL,
    browser: {
      kind: e.OPERATOR_BROWSER,
      chromiumPath: e.CHROMIUM_PATH,
      browserlessUrl: e.BROWSERLESS_URL,
      maxBrowsers: e.OPERATOR_MAX_BROWSERS,
      /** Local browsers kept launched ahead of creates, within maxBrowsers; 0 keeps none. */
      warmBrowsers: e.OPERATOR_WARM_BROWSERS,
      allowUnsandboxed: e.OPERATOR_ALLOW_UNSANDBOXED_BROWSER,
      /**
       * With no service connected, how long a device's browser keeper waits for one to
       * come back before it closes the browser: long enough for a deploy's restart (and a
       * slow migration), short enough that a host that never comes back holds no browsers.
       */
      keepSecs: e.OPERATOR_BROWSER_KEEP_SECS,
      /** SIGTERM closes every browser for good (the host is being retired) instead of handing them over. */
      retireOnStop: e.OPERATOR_RETIRE_ON_STOP,
      /** As root, each running local browser gets a uid of this range, all of them this group. */
      users: { firstUid: firstBrowserUid, lastUid: lastBrowserUid, gid: e.OPERATOR_BROWSER_GID },
    },
    /** What devices' browsers may connect to (server/net/egress-policy.ts). */
    egress: {
      allowPrivate: e.OPERATOR_ALLOW_PRIVATE_DESTINATIONS,
      testAllowed: e.OPERATOR_TEST_ALLOW_DESTINATIONS,
      /** A remote browserless deployment enforces the policy itself (its own firewall). */
      enforcedElsewhere: e.OPERATOR_EGRESS_ENFORCED_ELSEWHERE,
      /** Where browsers on other hosts reach the proxy (an address or a name); null: the internal URL's host. */
      proxyHost: e.OPERATOR_EGRESS_PROXY_HOST,
      /** The proxy's fixed port; null: any, kept across restarts. */
      proxyPort: e.OPERATOR_EGRESS_PROXY_PORT ?? null,
    },
    regions: e.OPERATOR_REGIONS,
    agent: {
      model,
      taskTimeoutMs: e.OPERATOR_TASK_TIMEOUT_SECS * 1000,
      leaseMs: e.OPERATOR_TASK_LEASE_SECS * 1000,
      workers: e.OPERATOR_TASK_WORKERS,
      /** A run past one of these is not stored as its cache key's entry (a step says so). */
      taskCache: { maxSteps: e.OPERATOR_TASK_CACHE_MAX_STEPS, maxBytes: e.OPERATOR_TASK_CACHE_MAX_BYTES, maxEntries: e.OPERATOR_TASK_CACHE_MAX_ENTRIES },
    },
    webhooks: {
      allowPrivateDestinations: e.OPERATOR_ALLOW_PRIVATE_DESTINATIONS,
      timeoutMs: e.OPERATOR_WEBHOOK_TIMEOUT_MS,
      retryScheduleMs: e.OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS?.split(',').map((step) => Number(step)) ?? null,
      concurrency: e.OPERATOR_WEBHOOK_CONCURRENCY,
    },
    escalations: { ttlMs: e.OPERATOR_ESCALATION_TTL_SECS * 1000 },
    sessions: { holdMs: e.OPERATOR_TAKEOVER_HOLD_SECS * 1000 },
    rateLimit: {
      perSecond: e.OPERATOR_RATE_LIMIT_PER_SEC,
      burst: e.OPERATOR_RATE_LIMIT_BURST,
      store: e.OPERATOR_RATE_LIMIT_STORE,
    },
    limits: {
      /** Failed authentications per client address and window before the address gets 429. */
      authFailures: { limit: e.OPERATOR_AUTH_FAILURE_LIMIT, windowSecs: e.OPERATOR_AUTH_FAILURE_WINDOW_SECS },
      eventStreamsPerKey: e.OPERATOR_MAX_STREAMS_PER_KEY,
      socketsPerSession: e.OPERATOR_SESSION_MAX_SOCKETS,
      /** Inputs a live-view socket may have waiting; one more closes it (1008). */
      sessionInputQueue: e.OPERATOR_SESSION_INPUT_QUEUE,
      /** Open client connections of the HTTP server (requests, WebSockets, streams); one more is closed unanswered. */
      connections: e.OPERATOR_MAX_CONNECTIONS,
    },
    prices: {
      deviceSecondMicro: e.OPERATOR_PRICE_DEVICE_SECOND_MICRO ?? null,
      sessionSecondMicro: e.OPERATOR_PRICE_SESSION_SECOND_MICRO ?? null,
      taskMicro: e.OPERATOR_PRICE_TASK_MICRO ?? null,
      stepMicro: e.OPERATOR_PRICE_STEP_MICRO ?? null,
      inputTokenMicro: e.OPERATOR_PRICE_INPUT_TOKEN_MICRO ?? null,
      outputTokenMicro: e.OPERATOR_PRICE_OUTPUT_TOKEN_MICRO ?? null,
    },
    sweepIntervalMs: e.OPERATOR_SWEEP_INTERVAL_MS,
    /** Recordings, step screenshots and downloads (never log it: it may hold credentials). */
    storage: parseStorageUrl(e.OPERATOR_STORAGE_URL, dataDir),
    artifacts: {
      retentionMs: e.OPERATOR_ARTIFACT_RETENTION_DAYS * 86_400_000,
      recordingFps: e.OPERATOR_RECORDING_FPS,
      recordingDeferMs: e.OPERATOR_RECORDING_DEFER_SECS * 1000,
      downloadMaxFileBytes: e.OPERATOR_DOWNLOAD_MAX_FILE_BYTES,
      downloadMaxTaskBytes: e.OPERATOR_DOWNLOAD_MAX_TASK_BYTES,
    },
    /**
     * The credential vault's AES-256-GCM keys. current null: generated into the data
     * directory with the embedded database, refused at start otherwise (secrets-key.ts).
     */
    secrets: { current: secretsKey(e.OPERATOR_SECRETS_KEY, 'OPERATOR_SECRETS_KEY'), previous: secretsKey(e.OPERATOR_SECRETS_KEY_PREVIOUS, 'OPERATOR_SECRETS_KEY_PREVIOUS') },
    /** Bearer of GET /metrics; null: the route does not exist. */
    metricsToken: e.OPERATOR_METRICS_TOKEN,
    /** What `npm run mcp` connects to: the API key, and the service's URL (default this one's public URL). */
    mcpClient: { apiKey: e.OPERATOR_API_KEY, baseUrl: (e.OPERATOR_BASE_URL ?? publicUrl).replace(/\/+$/, '') },
  };
}

export type Config = ReturnType<typeof loadConfig>;

/** A vault key as configured: 32 bytes in base64 (`openssl rand -base64 32`), or null when unset. */
function secretsKey(value: string | null, name: string): Buffer | null {
  if (value === null) return null;
  const key = Buffer.from(value, 'base64');
  if (key.length !== 32 || key.toString('base64') !== value) {
    throw new Error(`Invalid configuration: ${name} must be 32 bytes in base64 (openssl rand -base64 32).`);
  }
  return key;
}
