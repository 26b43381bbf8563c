import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../db/embedded-postgres';
import { freePort } from './service-process';

/**
 * A PostgreSQL server the test owns, unlike the machine's shared one: it may be stopped
 * and started again on the same port and data, e.g. to take the database away from a
 * running service. The PostgreSQL of the embedded-postgres package, through the
 * service's own db/embedded-postgres.ts, so it runs the same as root (as `postgres`) and
 * as an ordinary user, with nothing to install.
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

export async function startOwnedPostgres(): Promise<OwnedPostgres> {
  const parent = await mkdtemp(path.join(tmpdir(), 'operator-owned-pg-'));
  // As root the server runs as `postgres`, which must pass through to its data.
  await chmod(parent, 0o755);
  const settings = { dir: path.join(parent, 'postgres'), port: await freePort(), onLog: () => {} };
  let running: EmbeddedDatabase | null = await startEmbeddedPostgres(settings);
  const url = running.url;
  return {
    url,
    async stop() {
      await running?.stop();
      running = null;
    },
    async start() {
      running ??= await startEmbeddedPostgres(settings);
    },
    async remove() {
      await running?.stop();
      running = null;
      await rm(parent, { recursive: true, force: true });
    },
  };
}
