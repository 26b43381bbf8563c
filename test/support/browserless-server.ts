// A real browserless 2.x server (the @browserless.io/browserless dev dependency) on
// 127.0.0.1, or on a host of test/support/network-hosts.ts, driving Debian's Chromium, for the tests of the browserless provider.
// Nothing is downloaded: browserless looks for Chromium where playwright-core would have
// installed it, so that path, under a private PLAYWRIGHT_BROWSERS_PATH, is a symlink to
// Debian's binary.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port';
import type { NetworkHost } from './network-hosts';

/** Debian's Chromium binary itself (/usr/bin/chromium is a wrapper script around it). */
const DEBIAN_CHROMIUM_BINARY = '/usr/lib/chromium/chromium';
const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

export interface BrowserlessServerOptions {
  /** Browsers it runs at once (browserless CONCURRENT). */
  concurrent: number;
  /** Connections it holds waiting for a free browser (QUEUED); 0 refuses them at once. */
  queued?: number;
  /** Runs it (and its Chromium) inside this host, listening on the host's address. */
  host?: NetworkHost;
}

export interface BrowserlessServer {
  /** ws://<address>:<port>/?token=<token> (127.0.0.1, or the host's): what BROWSERLESS_URL is set to. */
  url: string;
  /** Where browserless makes each connection's temporary profile. */
  dataDir: string;
  /** Stops the server and every Chromium it started. */
  stop(): Promise<void>;
}

export async function startBrowserlessServer(options: BrowserlessServerOptions): Promise<BrowserlessServer> {
  // browserless 2.42 needs Node 24; the project's scripts run on the `node` package's 24.
  if (Number(process.versions.node.split('.')[0]) < 24) {
    throw new Error(`browserless needs Node 24 or newer; the tests run on ${process.version} (run them through npm or npx)`);
  }
  const packageDir = path.resolve(path.dirname(createRequire(import.meta.url).resolve('@browserless.io/browserless')), '..');
  const root = await mkdtemp(path.join(tmpdir(), 'operator-browserless-'));
  const browsersDir = path.join(root, 'browsers');
  const dataDir = path.join(root, 'data');
  const routesDir = path.join(root, 'routes');
  await Promise.all([mkdir(dataDir), mkdir(routesDir)]);

  const executable = await expectedChromiumPath(packageDir, browsersDir);
  await mkdir(path.dirname(executable), { recursive: true });
  await symlink(DEBIAN_CHROMIUM_BINARY, executable);
  // browserless refuses to start when a route's browser is missing, and only Chromium is
  // here: it is given the Chromium and management routes alone.
  await Promise.all(['chromium', 'management'].map((name) => symlink(path.join(packageDir, 'build', 'routes', name), path.join(routesDir, name))));

  const port = await freePort();
  const token = `test-${Math.random().toString(36).slice(2)}`;
  const address = options.host?.address ?? '127.0.0.1';
  const start = options.host?.spawn.bind(options.host) ?? spawn;
  const child = start(process.execPath, [path.join(packageDir, 'build', 'index.js')], {
    // It reads playwright-core's browsers.json relative to the working directory.
    cwd: packageDir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      NODE_ENV: 'production',
      PATH: process.env.PATH,
      HOME: root,
      HOST: address,
      PORT: String(port),
      TOKEN: token,
      CONCURRENT: String(options.concurrent),
      QUEUED: String(options.queued ?? 0),
      DATA_DIR: dataDir,
      DOWNLOAD_DIR: path.join(root, 'downloads'),
      METRICS_JSON_PATH: path.join(root, 'metrics.json'),
      ROUTES: routesDir,
      PLAYWRIGHT_BROWSERS_PATH: browsersDir,
      ENABLE_DEBUGGER: 'false',
      DEBUG: '-*',
    },
  });
  const output = collectOutput(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, 'SIGTERM');
      const stopped = await Promise.race([exited.then(() => true), delay(STOP_GRACE_MS).then(() => false)]);
      if (!stopped) process.kill(-child.pid!, 'SIGKILL');
      await exited;
    }
    // Chromium runs in process groups of its own (puppeteer starts it detached), so the
    // server's group does not cover it: whatever still runs from this root is killed.
    await killProcessesMentioning(root);
    await rm(root, { recursive: true, force: true });
  };

  try {
    await waitUntilServing(`http://${address}:${port}/pressure?token=${token}`, exited, output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `ws://${address}:${port}/?token=${token}`, dataDir, stop };
}

/** Where browserless's own playwright-core expects Chromium under `browsersDir`. */
async function expectedChromiumPath(packageDir: string, browsersDir: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '--eval', "import playwright from 'playwright-core'; process.stdout.write(playwright.chromium.executablePath());"],
    { cwd: packageDir, env: { NODE_ENV: 'production', PATH: process.env.PATH, PLAYWRIGHT_BROWSERS_PATH: browsersDir } },
  );
  if (!stdout.startsWith(browsersDir)) throw new Error(`playwright-core expects Chromium outside ${browsersDir}: ${stdout}`);
  return stdout;
}

async function waitUntilServing(url: string, exited: Promise<void>, output: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gone) throw new Error(`browserless exited while starting:\n${output()}`);
    const answered = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
      async (response) => {
        await response.body?.cancel();
        return response.ok;
      },
      () => false,
    );
    if (answered) return;
    await delay(100);
  }
  throw new Error(`browserless did not serve within ${START_TIMEOUT_MS} ms:\n${output()}`);
}

/** The last few kilobytes the server printed, for the error when it does not start. */
function collectOutput(child: ChildProcess): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text;
}

/** SIGKILLs every process whose command line mentions `marker`, until none is left. */
async function killProcessesMentioning(marker: string): Promise<void> {
  const deadline = Date.now() + STOP_GRACE_MS;
  for (;;) {
    const pids = await processesMentioning(marker);
    if (pids.length === 0) return;
    if (Date.now() > deadline) throw new Error(`processes of ${marker} would not die: ${pids.join(', ')}`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await delay(50);
  }
}

async function processesMentioning(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (commandLine.includes(marker)) found.push(Number(entry));
  }
  return found;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
