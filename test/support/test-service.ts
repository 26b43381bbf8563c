import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../server/core/config';
import { createApiKey, createOrganization, createSpace, type NewOrganization } from '../../server/domain/orgs/operator-admin';
import { scopes, type Scope } from '../../server/domain/keys/scopes';
import { startService, type RunningService, type StopMode } from '../../server/assembly/start-service';
import { createTestDatabase, type TestDatabase } from './test-database';

export interface TestService {
  service: RunningService;
  url: string;
  database: TestDatabase;
  dataDir: string;
  /** Environment the service was started with, for restarts. */
  env: Record<string, string>;
  stop(): Promise<void>;
  /**
   * Stops the server (keeping its database and data) and starts a new one on them: by
   * default as a deploy does (`handover`: browsers and tasks carry over), or `close`.
   */
  restart(mode?: StopMode): Promise<void>;
}

/** The configuration tests start the service with: `env` over these. */
function testEnvironment(databaseUrl: string, dataDir: string, env: Record<string, string>): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    OPERATOR_DATA_DIR: dataDir,
    OPERATOR_LOG_LEVEL: 'silent',
    OPERATOR_SERVE_CONSOLE: 'false',
    OPERATOR_RATE_LIMIT_PER_SEC: '1000',
    OPERATOR_RATE_LIMIT_BURST: '2000',
    // Tests send many bad credentials from 127.0.0.1 on purpose; the throttle of failed
    // authentications has its own test (abuse-limits.test.ts) at its default threshold.
    OPERATOR_AUTH_FAILURE_LIMIT: '1000000',
    OPERATOR_DB_POOL_SIZE: '10',
    // Tests serve their pages and receivers on loopback. The egress and destination
    // suites (abuse-egress, webhooks-endpoints) start with the default, false.
    OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // Warm browsers would double the Chromium processes of every test on a 2-core
    // machine; the warm pool's own tests (warm-browsers.test.ts) turn them on.
    OPERATOR_WARM_BROWSERS: '0',
    // vitest.config.ts sets one per run.
    OPERATOR_SECRETS_KEY: process.env.OPERATOR_SECRETS_KEY ?? '',
    ...env,
  };
}

/**
 * Starts the real service in this process on a database and data directory the test
 * keeps: e.g. the next start after a service process the test killed.
 */
export function startServiceOn(databaseUrl: string, dataDir: string, env: Record<string, string> = {}): Promise<RunningService> {
  return startService(loadConfig(testEnvironment(databaseUrl, dataDir, env)));
}

/**
 * Starts the real service on a free port, on a fresh database, with the console off
 * (the API never goes through Next). `env` overrides configuration variables.
 */
export async function startTestService(env: Record<string, string> = {}, options: { logDestination?: { write(line: string): void } } = {}): Promise<TestService> {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'operator-test-'));
  const fullEnv = testEnvironment(database.url, dataDir, env);
  let service: RunningService;
  try {
    service = await startService(loadConfig(fullEnv), options);
  } catch (error) {
    // A test of a start that fails gets its error; the folder and database go all the same.
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const handle: TestService = {
    service,
    url: service.url,
    database,
    dataDir,
    env: fullEnv,
    async stop() {
      try {
        await handle.service.close();
        await database.drop();
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
    async restart(mode: StopMode = 'handover') {
      await handle.service.close(mode);
      const port = new URL(handle.url).port;
      service = await startService(loadConfig({ ...fullEnv, PORT: port }), options);
      handle.service = service;
    },
  };
  return handle;
}

/**
 * Another instance on the test service's database, with a data directory of its own (one
 * process per data directory): a second host. `close()` stops it and removes its directory.
 */
export async function startAnotherInstance(test: TestService, env: Record<string, string> = {}): Promise<RunningService> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'operator-test-other-'));
  try {
    const service = await startService(loadConfig({ ...test.env, PORT: '0', OPERATOR_DATA_DIR: dataDir, ...env }));
    const close = service.close;
    return { ...service, close: () => close().finally(() => rm(dataDir, { recursive: true, force: true })) };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

export interface TestTenant {
  orgId: string;
  spaceId: string;
  /** The secret escalation deliveries are signed with; null without an escalation URL. */
  escalationSigningSecret: string | null;
  /** Makes a key of this organization with the given scopes (org-wide unless spaces given). */
  key(scopes: readonly Scope[], spaceIds?: string[]): Promise<string>;
  newSpace(name?: string): Promise<string>;
}

export async function createTenant(test: TestService, options: Partial<NewOrganization> = {}): Promise<TestTenant> {
  const db = test.service.services.db;
  const { org_id: orgId, escalation_signing_secret: escalationSigningSecret = null } = await createOrganization(db, {
    name: 'Test org',
    entitled: true,
    maxDevices: null,
    maxDeviceSeconds: null,
    escalationUrl: null,
    ...options,
  });
  const { space_id: spaceId } = await createSpace(db, orgId, 'default');
  return {
    orgId,
    spaceId,
    escalationSigningSecret,
    async key(scopes, spaceIds = []) {
      const created = await createApiKey(db, { orgId, scopes: [...scopes], spaceIds, env: 'test' });
      return created.key;
    },
    async newSpace(name = 'another') {
      return (await createSpace(db, orgId, name)).space_id;
    },
  };
}

export const allScopes: readonly Scope[] = scopes;
