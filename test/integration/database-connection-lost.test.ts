import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port';
import { startPostgresFaultProxy, type PostgresFaultProxy } from '../support/postgres-fault-proxy';
import { PROJECT_ROOT } from '../support/service-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

// The database goes away just as a connection of the service finished opening: postgres.js
// was reading the array types on it, a read whose promise it hands to nobody. The service
// process must wait the outage out like any other, not die of an unhandled rejection.

let database: TestDatabase;
let proxy: PostgresFaultProxy;
let child: ChildProcess;
let dataDir: string;
let url: string;
let stderr = '';

beforeAll(async () => {
  database = await createTestDatabase();
  proxy = await startPostgresFaultProxy(database.url, await freePort());
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-connection-lost-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: proxy.url,
      OPERATOR_DATA_DIR: dataDir,
      OPERATOR_SERVE_CONSOLE: 'false',
      OPERATOR_WARM_BROWSERS: '0',
      OPERATOR_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await untilReady(60_000);
});

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
  }
  await proxy?.close();
  await database?.drop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

async function untilReady(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fetch(`${url}/readyz`).then((response) => response.ok, () => false))) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`the service was not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

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
    expect(child.exitCode, stderr).toBeNull();

    await proxy.restore();
    await untilReady(30_000);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  }, 120_000);
});
