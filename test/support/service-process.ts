import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port';
import { SERVICE_READY_WITHIN_MS, untilServiceReady } from './service-ready';
import { createTestDatabase, type TestDatabase } from './test-database';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// The credential vault's key of the services this process starts (their database is
// DATABASE_URL, where the start refuses without one): vitest's per run, or one of this
// process's own (benchmarks, the e2e setup).
const SECRETS_KEY = process.env.OPERATOR_SECRETS_KEY ?? randomBytes(32).toString('base64');

/** One line naming the machine, recorded next to every figure. */
export function machineDescription(): string {
  return `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}`;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export interface ServiceProcess {
  url: string;
  /** The service's process id, e.g. to read the CPU time it used (a restart changes it). */
  readonly pid: number;
  database: TestDatabase;
  /** SIGINT: the service stops and closes its browsers (nothing of it outlives the test). */
  stop(): Promise<void>;
  /** Stops the service as a deployment does (SIGTERM: browsers and tasks are handed over) and starts it again on the same port, database and environment. */
  restart(): Promise<void>;
}

/**
 * Runs the real service (server/main.ts) as its own process, as `npm start` does, on a
 * fresh database, so the load generator in this process does not share its event loop.
 * Its log (stdout) is shown, or discarded, e.g. when a benchmark turns on the access log.
 */
export async function startServiceProcess(env: Record<string, string>, options: { log: 'show' | 'discard' } = { log: 'show' }): Promise<ServiceProcess> {
  const database = await createTestDatabase();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const spawnReady = async (): Promise<ChildProcess> => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'server/main.ts')], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: database.url, OPERATOR_SECRETS_KEY: SECRETS_KEY, OPERATOR_SERVE_CONSOLE: 'false', OPERATOR_LOG_LEVEL: 'warn', OPERATOR_WARM_BROWSERS: '0', ...env },
      stdio: ['ignore', options.log === 'show' ? 'inherit' : 'ignore', 'inherit'],
    });
    try {
      await untilServiceReady(url, child, SERVICE_READY_WITHIN_MS);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    return child;
  };
  const stopGracefully = async (child: ChildProcess, signal: 'SIGTERM' | 'SIGINT') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  let child = await spawnReady();
  // A stop during a restart (a test that failed meanwhile) waits for the new process to stop it.
  let restarting: Promise<void> = Promise.resolve();
  return {
    url,
    get pid() {
      return child.pid!;
    },
    database,
    async stop() {
      await restarting.catch(() => undefined);
      await stopGracefully(child, 'SIGINT');
      await database.drop();
    },
    restart() {
      restarting = (async () => {
        await stopGracefully(child, 'SIGTERM');
        child = await spawnReady();
      })();
      return restarting;
    },
  };
}
