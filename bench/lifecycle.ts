import http from 'node:http';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { connectDatabase } from '../db/client';
import { CHROMIUM_FLAGS } from '../server/browser/local-provider';
import { createApiKey, createOrganization, createSpace } from '../server/domain/orgs/operator-admin';
import { launchChromiumAsTheService } from '../test/support/browser-fixtures';
import { startBrowserlessServer, type BrowserlessServer } from '../test/support/browserless-server';
import { machineDescription, percentile, startServiceProcess, type ServiceProcess } from '../test/support/service-process';
import { machineCpuMs, machineLoad } from './machine-load';

// `npm run bench:lifecycle`: BrowserArena's lifecycle measure. One cycle is: create a
// device (POST /v1/devices) → CDP access (POST /v1/devices/{id}/cdp) → puppeteer.connect
// to cdp_url → a new page → navigate to a local page (load event) → disconnect and
// release (DELETE /v1/devices/{id}), timed apart. At concurrency 1 (cycles one after another) and 10
// (ten cycles at once), p50 and p95, in one run; at c1 also the mean and the CPU the machine
// spent per cycle, which bounds back-to-back cycles (a cycle cannot take less than its CPU
// spread over the cores), and for the warm pool a paced c1 (BENCH_PACE_MS between cycles,
// so each create finds the pool refilled). Beside:
// - the floor: a bare Chromium launch (the local provider's flags, uid and sandbox) +
//   puppeteer connected over its pipe + a new page + the same navigation + close;
// - the service on a real browserless server on this machine (OPERATOR_BROWSER=browserless).
const CYCLES_C1 = Number(process.env.BENCH_CYCLES ?? 10);
/** Batches of ten concurrent cycles. */
const BATCHES_C10 = Number(process.env.BENCH_BATCHES ?? 2);
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Which setups to measure (comma-separated): floor, local, warm, browserless; all by default. */
const SETUPS = new Set((process.env.BENCH_SETUPS ?? 'floor,local,warm,browserless').split(',').map((setup) => setup.trim()));
/**
 * The warm pool's paced row: the pause before each cycle, long enough for the pool to
 * launch the browser the cycle before took (a launch takes about half a second here).
 */
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 2_000);

interface Row {
  setup: string;
  concurrency: number;
  samples: number;
  p50Ms: number;
  p95Ms: number;
  /** c1 rows: the mean, which back-to-back cycles cannot bring below cpuMsPerCycle / cores. */
  meanMs?: number;
  /**
   * c1 rows: the CPU the whole machine spent per cycle (every process: browsers, the
   * service, PostgreSQL, this client), the warm pool's refills included.
   */
  cpuMsPerCycle?: number;
  /** Service setups, c1: the median of each step, to show where a cycle's time goes. */
  stepsP50Ms?: Record<string, number>;
  /**
   * c10 rows: cycles that failed (a create answered 503 capacity_exhausted when ten
   * browsers starting at once outlast a browserless connect's timeout on a slow host),
   * reported with the first one's error rather than ending the whole run.
   */
  failed?: { cycles: number; first: string };
}

/** One cycle's total, and the time of each of its steps. */
type Cycle = () => Promise<{ totalMs: number; steps: Record<string, number> }>;

/** Runs the steps in order, timing each. */
async function timed(steps: Array<[string, () => Promise<unknown>]>): Promise<{ totalMs: number; steps: Record<string, number> }> {
  const times: Record<string, number> = {};
  const started = performance.now();
  for (const [name, step] of steps) {
    const began = performance.now();
    await step();
    times[name] = performance.now() - began;
  }
  return { totalMs: performance.now() - started, steps: times };
}

async function startPage(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end('<!doctype html><title>Lifecycle</title><p>A local page</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The service in its own process, with a key that may create devices and CDP sessions. */
async function serviceCycle(env: Record<string, string>, pageUrl: string): Promise<{ cycle: Cycle; service: ServiceProcess; dataDir: string }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-lifecycle-'));
  const service = await startServiceProcess({
    OPERATOR_DATA_DIR: dataDir,
    CHROMIUM_PATH,
    OPERATOR_MAX_BROWSERS: '20',
    OPERATOR_RATE_LIMIT_PER_SEC: '1000',
    OPERATOR_RATE_LIMIT_BURST: '1000',
    // The page is served on loopback, which devices may not reach by default.
    OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
    ...env,
  });
  let spaceId: string;
  let key: string;
  try {
    const database = connectDatabase(service.database.url, 2);
    const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    spaceId = (await createSpace(database.db, orgId, 'bench')).space_id;
    key = (await createApiKey(database.db, { orgId, scopes: ['operator:devices:write', 'operator:sessions:control'], spaceIds: [], env: 'test' })).key;
    await database.close();
  } catch (error) {
    // A service whose tenant could not be made is not left running.
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const call = async (method: string, route: string, body?: unknown): Promise<any> => {
    const response = await fetch(`${service.url}${route}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.json();
    if (response.status >= 300) throw new Error(`${method} ${route} answered ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const cycle: Cycle = async () => {
    let device: { id: string } = { id: '' };
    let access: { cdp_url: string } = { cdp_url: '' };
    let browser: Browser | null = null;
    let page: Page | null = null;
    return timed([
      ['create', async () => (device = await call('POST', '/v1/devices', { space_id: spaceId }))],
      ['cdp_session', async () => (access = await call('POST', `/v1/devices/${device.id}/cdp`, {}))],
      [
        'connect',
        async () => {
          const url = new URL(access.cdp_url);
          // cdp_url as issued, on the address this process reaches the service at.
          browser = await puppeteer.connect({ browserWSEndpoint: `${service.url.replace(/^http/, 'ws')}${url.pathname}${url.search}`, defaultViewport: null });
        },
      ],
      ['new_page', async () => (page = await browser!.newPage())],
      ['navigate', async () => page!.goto(pageUrl, { waitUntil: 'load' })],
      // The release, in its two parts: the client lets go, then DELETE (answered).
      ['disconnect', async () => browser!.disconnect()],
      ['delete', async () => call('DELETE', `/v1/devices/${device.id}`)],
    ]);
  };
  return { cycle, service, dataDir };
}

/** The floor: what a cycle costs with no service at all. */
async function floorCycle(root: string, pageUrl: string): Promise<Cycle> {
  let next = 0;
  return async () => {
    let browser: Browser | null = null;
    let page: Page | null = null;
    return timed([
      ['launch', async () => (browser = await launchChromiumAsTheService(path.join(root, `floor-${next++}`), CHROMIUM_FLAGS, CHROMIUM_PATH))],
      ['new_page', async () => (page = await browser!.newPage())],
      ['navigate', async () => page!.goto(pageUrl, { waitUntil: 'load' })],
      ['close', async () => browser!.close()],
    ]);
  };
}

/**
 * c1 (cycles one after another) and c10 (batches of ten at once). With `pacedMs`, c1
 * only, each cycle `pacedMs` after the one before: what a create finds when creates come
 * less often than a host launches browsers.
 */
async function measure(setup: string, cycle: Cycle, options: { pacedMs?: number } = {}): Promise<Row[]> {
  await cycle(); // Warm-up: disk caches, the JIT, the first connection.
  const pause = () => new Promise((resolve) => setTimeout(resolve, options.pacedMs ?? 0));
  await pause(); // the warm-up's refill
  const c1: Array<Awaited<ReturnType<Cycle>>> = [];
  // From the first cycle's start to the last one's pause's end: what a cycle leaves
  // running (a browser closing, the pool's refill) is its cost, paid in the pause or
  // in the next cycle.
  const cpuBefore = machineCpuMs();
  for (let i = 0; i < CYCLES_C1; i += 1) {
    c1.push(await cycle());
    await pause();
  }
  const cpuMs = machineCpuMs() - cpuBefore;
  const stepNames = Object.keys(c1[0]?.steps ?? {});
  const stepsP50Ms = Object.fromEntries(stepNames.map((name) => [name, Math.round(percentile(c1.map((run) => run.steps[name]!).sort((a, b) => a - b), 50))]));
  const totals = c1.map((run) => run.totalMs);
  const c1Row: Row = { ...row(options.pacedMs === undefined ? setup : `${setup}, paced (${options.pacedMs} ms between cycles)`, 1, totals), meanMs: Math.round(totals.reduce((sum, ms) => sum + ms, 0) / totals.length), cpuMsPerCycle: Math.round(cpuMs / CYCLES_C1), stepsP50Ms };
  if (options.pacedMs !== undefined) return [c1Row];
  const c10: Array<PromiseSettledResult<Awaited<ReturnType<Cycle>>>> = [];
  for (let batch = 0; batch < BATCHES_C10; batch += 1) c10.push(...(await Promise.allSettled(Array.from({ length: 10 }, () => cycle()))));
  const c10Row = row(setup, 10, c10.flatMap((run) => (run.status === 'fulfilled' ? [run.value.totalMs] : [])));
  const failures = c10.flatMap((run) => (run.status === 'rejected' ? [String(run.reason instanceof Error ? run.reason.message : run.reason)] : []));
  return [c1Row, failures.length === 0 ? c10Row : { ...c10Row, failed: { cycles: failures.length, first: failures[0]! } }];
}

function row(setup: string, concurrency: number, samples: number[]): Row {
  const sorted = [...samples].sort((a, b) => a - b);
  return { setup, concurrency, samples: sorted.length, p50Ms: Math.round(percentile(sorted, 50)), p95Ms: Math.round(percentile(sorted, 95)) };
}

async function main(): Promise<void> {
  const loadBefore = await machineLoad();
  const page = await startPage();
  const root = await mkdtemp(path.join(tmpdir(), 'bench-lifecycle-floor-'));
  // Bare profiles' browser uids must pass this folder, as the service's profiles folder lets them.
  await chmod(root, 0o711);
  const rows: Row[] = [];
  let browserless: BrowserlessServer | null = null;
  try {
    if (SETUPS.has('floor')) rows.push(...(await measure('floor: bare Chromium launch + puppeteer + page + navigate + close', await floorCycle(root, page.url))));

    if (SETUPS.has('local')) {
      const local = await serviceCycle({ OPERATOR_BROWSER: 'local' }, page.url);
      try {
        rows.push(...(await measure('service, local Chromium', local.cycle)));
      } finally {
        await local.service.stop();
        await rm(local.dataDir, { recursive: true, force: true });
      }
    }

    if (SETUPS.has('warm')) {
      // As shipped: OPERATOR_WARM_BROWSERS defaults to 2 (the run above has none, so create is a launch).
      const warm = await serviceCycle({ OPERATOR_BROWSER: 'local', OPERATOR_WARM_BROWSERS: '2' }, page.url);
      try {
        rows.push(...(await measure('service, local Chromium, warm pool of 2 (the default)', warm.cycle)));
        rows.push(...(await measure('service, local Chromium, warm pool of 2 (the default)', warm.cycle, { pacedMs: PACE_MS })));
      } finally {
        await warm.service.stop();
        await rm(warm.dataDir, { recursive: true, force: true });
      }
    }

    if (SETUPS.has('browserless')) {
      browserless = await startBrowserlessServer({ concurrent: 12, queued: 0 });
      const remote = await serviceCycle({ OPERATOR_BROWSER: 'browserless', BROWSERLESS_URL: browserless.url }, page.url);
      try {
        rows.push(...(await measure('service, browserless on this machine', remote.cycle)));
      } finally {
        await remote.service.stop();
        await rm(remote.dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    await browserless?.stop();
    await rm(root, { recursive: true, force: true });
    await page.close();
  }
  const load = { before: loadBefore, after: await machineLoad() };
  console.log(JSON.stringify({ machine: machineDescription(), chromium: CHROMIUM_PATH, load, cyclesC1: CYCLES_C1, batchesC10: BATCHES_C10, rows }, null, 2));
  console.log('\n| Setup | Concurrency | Samples | p50 (ms) | p95 (ms) | Mean (ms) | CPU per cycle (ms) | Steps at c1, p50 (ms) | Failed |\n|---|---|---|---|---|---|---|---|---|');
  for (const { setup, concurrency, samples, p50Ms, p95Ms, meanMs, cpuMsPerCycle, stepsP50Ms, failed } of rows) {
    const steps = stepsP50Ms === undefined ? '' : Object.entries(stepsP50Ms).map(([name, ms]) => `${name} ${ms}`).join(', ');
    console.log(`| ${setup} | c${concurrency} | ${samples} | ${p50Ms} | ${p95Ms} | ${meanMs ?? ''} | ${cpuMsPerCycle ?? ''} | ${steps} | ${failed === undefined ? '' : `${failed.cycles}: ${failed.first}`} |`);
  }
}

await main();
