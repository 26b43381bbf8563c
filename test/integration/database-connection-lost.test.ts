import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { startPostgresFaultProxy, type PostgresFaultProxy } from '../support/postgres-fault-proxy';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

// The database goes away just as a connection of the service finished opening: postgres.js
// was reading the array types on it, a read whose promise it handed to nobody (patched:
// patches/README.md). The service process must wait the outage out like any other, not
// die of an unhandled rejection.

let database: TestDatabase;
let proxy: PostgresFaultProxy;
let host: HostProcess;
let dataDir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  proxy = await startPostgresFaultProxy(database.url, await freePort());
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-connection-lost-'));
  host = await startHostProcess({ databaseUrl: proxy.url, dataDir, port: await freePort() });
});

afterAll(async () => {
  await host?.stop('SIGINT');
  await proxy?.close();
  await database?.drop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('a database lost as a connection opens', () => {
  it('is waited out: the service keeps running and answers again once the database is back', async () => {
    proxy.cutAfterStartup();
    // The service's connections end; its next query opens a new one, through the proxy.
    const admin = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    } finally {
      await admin.end();
    }
    await expect.poll(() => proxy.cuts, { timeout: 30_000 }).toBeGreaterThan(0);
    // The next attempt was refused: what was in flight on the cut connection failed by now.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(host.exitCode, host.stderrTail).toBeNull();

    await proxy.restore();
    await host.untilReady(30_000);
    expect((await fetch(`${host.url}/readyz`)).status).toBe(200);
  }, 120_000);
});
