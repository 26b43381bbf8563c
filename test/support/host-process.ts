import { spawn, type ChildProcess } from 'node:child_process';
import type { NetworkHost } from './network-hosts';
import { SERVICE_READY_WITHIN_MS, untilServiceReady } from './service-ready';
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
  /**
   * Keeps the service's log (stdout, one JSON object a line) in `lines`, for a test that
   * reads what it logged; by default it is discarded (TEST_SERVICE_LOG_LEVEL shows it).
   */
  keepLog?: boolean;
}

/** One run of the real service (server/main.ts) on a data directory, as a process a test may signal or kill. */
export interface HostProcess {
  readonly url: string;
  readonly pid: number;
  /** Its exit code once it ended by itself; null while it runs, or after a signal ended it. */
  readonly exitCode: number | null;
  /** What it logged, line by line, when started with `keepLog`. */
  readonly lines: readonly string[];
  /** The last 2 000 characters it wrote to stderr (which is passed on to the test's). */
  readonly stderrTail: string;
  /** Waits until /readyz answers 200, e.g. once its database is back; fails if the service exits meanwhile. */
  untilReady(timeoutMs: number): Promise<void>;
  /**
   * Sends `signal` (SIGTERM: a deploy's hand-over; SIGINT: Ctrl-C; SIGKILL: a crash) and
   * waits for the exit: its exit code, null when the signal ended it (or it had ended).
   */
  stop(signal: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the service as `npm start` would and waits until /readyz answers. Node itself runs
 * with tsx as a loader, so a signal reaches the server (the tsx binary would be a wrapper
 * process around it). Crash, restart and outage tests use it on a data directory they
 * keep across runs.
 */
export async function startHostProcess(options: HostProcessOptions): Promise<HostProcess> {
  const address = options.host?.address ?? '127.0.0.1';
  const start = options.host?.spawn.bind(options.host) ?? spawn;
  const showLog = process.env.TEST_SERVICE_LOG_LEVEL !== undefined;
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
      OPERATOR_LOG_LEVEL: process.env.TEST_SERVICE_LOG_LEVEL ?? (options.keepLog === true ? 'info' : 'error'),
      OPERATOR_RATE_LIMIT_PER_SEC: '1000',
      OPERATOR_RATE_LIMIT_BURST: '2000',
      ...options.env,
    },
    stdio: ['ignore', options.keepLog === true ? 'pipe' : showLog ? 'inherit' : 'ignore', 'pipe'],
  });
  const lines: string[] = [];
  let partialLine = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    if (showLog) process.stdout.write(chunk);
    const text = partialLine + chunk.toString('utf8');
    const complete = text.split('\n');
    partialLine = complete.pop()!;
    lines.push(...complete);
  });
  // Passed on as it comes, and its end kept for the error of a service that would not start.
  let stderrTail = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-2_000);
  });
  const url = `http://${address}:${options.port}`;
  try {
    await untilServiceReady(url, child, SERVICE_READY_WITHIN_MS, () => stderrTail.trim());
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    pid: child.pid!,
    get exitCode() {
      return child.exitCode;
    },
    lines,
    get stderrTail() {
      return stderrTail;
    },
    untilReady: (timeoutMs) => untilServiceReady(url, child, timeoutMs, () => stderrTail.trim()),
    async stop(signal) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill(signal);
      return exited;
    },
  };
}
