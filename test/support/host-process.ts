import { spawn, type ChildProcess } from 'node:child_process';
import type { NetworkHost } from './network-hosts';
import { PROJECT_ROOT } from './service-process';

export interface HostProcessOptions {
  databaseUrl: string;
  /** The host: its data directory (host id, keepers, profiles). */
  dataDir: string;
  port: number;
  /** More environment, e.g. short leases or the browserless provider. */
  env?: Record<string, string>;
  /** Runs it inside this host (test/support/network-hosts.ts), listening on the host's address; by default on 127.0.0.1 here. */
  host?: NetworkHost;
}

/** One run of the real service (server/main.ts) on a data directory, as a process a test may signal or kill. */
export interface HostProcess {
  readonly url: string;
  readonly pid: number;
  /** Sends `signal` (SIGTERM: a deploy's hand-over; SIGINT: Ctrl-C; SIGKILL: a crash) and waits for the exit. */
  stop(signal: NodeJS.Signals): Promise<void>;
}

/**
 * Starts the service as `npm start` would and waits until /readyz answers. Node itself runs
 * with tsx as a loader, so a signal reaches the server (the tsx binary would be a wrapper
 * process around it). Crash and restart tests use it on a data directory they keep across
 * runs.
 */
export async function startHostProcess(options: HostProcessOptions): Promise<HostProcess> {
  const address = options.host?.address ?? '127.0.0.1';
  const start = options.host?.spawn.bind(options.host) ?? spawn;
  const child: ChildProcess = start(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      PORT: String(options.port),
      HOST: address,
      DATABASE_URL: options.databaseUrl,
      OPERATOR_DATA_DIR: options.dataDir,
      OPERATOR_SERVE_CONSOLE: 'false',
      OPERATOR_WARM_BROWSERS: '0',
      // TEST_SERVICE_LOG_LEVEL=info shows a test's service logs while debugging it.
      OPERATOR_LOG_LEVEL: process.env.TEST_SERVICE_LOG_LEVEL ?? 'error',
      OPERATOR_RATE_LIMIT_PER_SEC: '1000',
      OPERATOR_RATE_LIMIT_BURST: '2000',
      ...options.env,
    },
    stdio: ['ignore', process.env.TEST_SERVICE_LOG_LEVEL === undefined ? 'ignore' : 'inherit', 'pipe'],
  });
  // Passed on as it comes, and its end kept for the error of a service that would not start.
  let stderrTail = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString()).slice(-2_000);
  });
  const url = `http://${address}:${options.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before it was ready: ${stderrTail.trim()}`);
    const ready = await fetch(`${url}/readyz`).then((response) => response.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('the service did not become ready within 60 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    pid: child.pid!,
    async stop(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}
