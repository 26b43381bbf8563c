import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from './test-database';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

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
  /** The service's process id, e.g. to read the CPU time it used. */
  pid: number;
  database: TestDatabase;
  /** SIGTERM; the service closes its browsers (OPERATOR_RETIRE_ON_STOP) unless `env` said otherwise. */
  stop(): Promise<void>;
}

/**
 * Runs the real service (server/main.ts) as its own process, as `npm start` does, on a
 * fresh database, so the load generator in this process does not share its event loop.
 * Its log (stdout) is shown, or discarded, e.g. when a benchmark turns on the access log.
 */
export async function startServiceProcess(env: Record<string, string>, options: { log: 'show' | 'discard' } = { log: 'show' }): Promise<ServiceProcess> {
  const database = await createTestDatabase();
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'server/main.ts')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: database.url, OPERATOR_SERVE_CONSOLE: 'false', OPERATOR_LOG_LEVEL: 'warn', OPERATOR_WARM_BROWSERS: '0', OPERATOR_RETIRE_ON_STOP: 'true', ...env },
    stdio: ['ignore', options.log === 'show' ? 'inherit' : 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode} before it was ready`);
  return {
    url,
    pid: child.pid!,
    database,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      await database.drop();
    },
  };
}

/** A port nobody listens on right now, picked by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
