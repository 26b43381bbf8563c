import { randomBytes } from 'node:crypto';
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
import { untilRecordingsSettled } from './recordings-settled';

// `npm run bench:lifecycle`: BrowserArena's lifecycle measure. One cycle is: create a
// device (POST /v1/devices) → CDP access (POST /v1/devices/{id}/cdp) → puppeteer.connect
// to cdp_url → a new page → navigate to a local page (load event) → disconnect and
// release (DELETE /v1/devices/{id}), timed apart. The floor: a bare Chromium launch (the
// local provider's flags, uid and sandbox) + puppeteer connected over its pipe + a new
// page + the same navigation + close.
//
// The goals' figures (issue 26) compare the service as shipped (its warm pool of 2) with
// the floor side by side, alternating: at c1 a floor cycle and a service cycle each round
// (which goes first alternates), at c10 a batch of ten of each in turn. Each side starts
// on a settled machine, as bench:tasks' sides do: the service's warm pool full again, no
// browser of a deleted device still closing and every recording stored, so neither side is
// charged the other's leftovers; each side's CPU (every process of the machine, from its
// start until it settled) is reported. Then, one after the other:
// - both back to back at c1: cycles with no pause, bound by the CPU a cycle costs (a cycle
//   cannot take less than that spread over the cores; each costs a Chromium launch, the
//   floor's in its cycle, the service's in the warm pool's refill);
// - the service without a warm pool (each create launches), and on a real browserless
//   server on this machine (OPERATOR_BROWSER=browserless), c1 and c10.
const CYCLES_C1 = Number(process.env.BENCH_CYCLES ?? 10);
/** Batches of ten concurrent cycles. */
const BATCHES_C10 = Number(process.env.BENCH_BATCHES ?? 2);
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Which setups to measure (comma-separated): floor, local, warm, browserless; all by default. */
const SETUPS = new Set((process.env.BENCH_SETUPS ?? 'floor,local,warm,browserless').split(',').map((setup) => setup.trim()));
/** The warm pool as shipped (OPERATOR_WARM_BROWSERS' default). */
const DEFAULT_WARM_BROWSERS = 2;
/** Issue 26's goals, read on the alternating rows. */
const GOALS = { c1P50MsAtMost: 300, c1VsFloorAtMost: 0.5, deleteP50MsAtMost: 30, c10VsFloorAtMost: 1.1 };
// How long a side may take to settle before the run fails: a pool that never refills is a fault.
const SETTLE_WITHIN_MS = 60_000;

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
   * service, PostgreSQL, this client), the warm pool's refills included; in the
   * alternating rows, from the cycle's start until the machine settled after it.
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
  /**
   * Service rows: the CDP connections' recordings that ended `failed` (no frame came
   * before the device's browser was killed), which saves their encoding.
   */
  recordingsFailed?: number;
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

/** A setup the bench runs cycles on: its cycle, and a wait until what its cycles left behind is done. */
interface Side {
  cycle: Cycle;
  settled: () => Promise<void>;
  /** A service's recordings ended `failed` by its last settling (the floor records nothing). */
  recordingsFailed?: () => number;
}

/** The service in its own process, with a key that may create devices and CDP sessions. */
async function serviceCycle(env: Record<string, string>, pageUrl: string): Promise<Side & { recordingsFailed: () => number; service: ServiceProcess; dataDir: string }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-lifecycle-'));
  const metricsToken = randomBytes(24).toString('base64url');
  const warmBrowsers = Number(env.OPERATOR_WARM_BROWSERS ?? 0);
  const service = await startServiceProcess({
    OPERATOR_METRICS_TOKEN: metricsToken,
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
  let recordingsFailed = 0;
  /** Every recording stored (or failed), the warm pool full, and no other browser (a deleted device's, closing). */
  const settled = async () => {
    recordingsFailed = (await untilRecordingsSettled(service)).failed;
    const gauge = (name: string, text: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    const deadline = Date.now() + SETTLE_WITHIN_MS;
    for (;;) {
      const text = await (await fetch(`${service.url}/metrics`, { headers: { Authorization: `Bearer ${metricsToken}` } })).text();
      if (gauge('operator_warm_browsers', text) === warmBrowsers && gauge('operator_browsers_in_use', text) === warmBrowsers) return;
      if (Date.now() > deadline) throw new Error(`the service did not settle within ${SETTLE_WITHIN_MS} ms: ${text.split('\n').filter((line) => line.startsWith('operator_') && line.includes('browsers')).join('; ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { cycle, settled, recordingsFailed: () => recordingsFailed, service, dataDir };
}

/** The floor: what a cycle costs with no service at all. It leaves nothing running (its close ends in the cycle). */
async function floorCycle(root: string, pageUrl: string): Promise<Side> {
  let next = 0;
  const cycle: Cycle = async () => {
    let browser: Browser | null = null;
    let page: Page | null = null;
    return timed([
      ['launch', async () => (browser = await launchChromiumAsTheService(path.join(root, `floor-${next++}`), CHROMIUM_FLAGS, CHROMIUM_PATH))],
      ['new_page', async () => (page = await browser!.newPage())],
      ['navigate', async () => page!.goto(pageUrl, { waitUntil: 'load' })],
      ['close', async () => browser!.close()],
    ]);
  };
  return { cycle, settled: async () => undefined };
}

type Run = Awaited<ReturnType<Cycle>>;

/** The c1 row of `runs`: p50, p95 and mean of the whole cycle, the median of each step, and `cpuMs` spread over them. */
function c1Row(setup: string, runs: Run[], cpuMs: number): Row {
  const stepNames = Object.keys(runs[0]?.steps ?? {});
  const stepsP50Ms = Object.fromEntries(stepNames.map((name) => [name, Math.round(percentile(runs.map((run) => run.steps[name]!).sort((a, b) => a - b), 50))]));
  const totals = runs.map((run) => run.totalMs);
  return { ...row(setup, 1, totals), meanMs: Math.round(totals.reduce((sum, ms) => sum + ms, 0) / totals.length), cpuMsPerCycle: Math.round(cpuMs / runs.length), stepsP50Ms };
}

/** The c10 row of `cycles` (ten at a time), with those that failed. */
function c10Row(setup: string, cycles: Array<PromiseSettledResult<Run>>): Row {
  const c10 = row(setup, 10, cycles.flatMap((run) => (run.status === 'fulfilled' ? [run.value.totalMs] : [])));
  const failures = cycles.flatMap((run) => (run.status === 'rejected' ? [String(run.reason instanceof Error ? run.reason.message : run.reason)] : []));
  return failures.length === 0 ? c10 : { ...c10, failed: { cycles: failures.length, first: failures[0]! } };
}

const tenAtOnce = (side: Side) => Promise.allSettled(Array.from({ length: 10 }, () => side.cycle()));

/**
 * The floor and the service side by side: at c1 a cycle of each per round, which one
 * first alternating; at c10 a batch of ten of each in turn. Every side starts once the
 * machine settled after the one before. Round -1 warms both up (disk caches, the JIT, the
 * first connection) and is not counted.
 */
async function measureAlternating(floor: Side, service: Side & { recordingsFailed: () => number }): Promise<{ floor: Row[]; service: Row[] }> {
  const runs = { floor: [] as Run[], service: [] as Run[] };
  const cpuMs = { floor: 0, service: 0 };
  await service.settled();
  for (let round = -1; round < CYCLES_C1; round += 1) {
    const order: Array<'floor' | 'service'> = round % 2 === 0 ? ['floor', 'service'] : ['service', 'floor'];
    for (const name of order) {
      const side = name === 'floor' ? floor : service;
      const cpuBefore = machineCpuMs();
      const run = await side.cycle();
      await side.settled();
      if (round < 0) continue;
      runs[name].push(run);
      cpuMs[name] += machineCpuMs() - cpuBefore;
    }
  }
  const batches = { floor: [] as Array<PromiseSettledResult<Run>>, service: [] as Array<PromiseSettledResult<Run>> };
  for (let batch = 0; batch < BATCHES_C10; batch += 1) {
    const order: Array<'floor' | 'service'> = batch % 2 === 0 ? ['floor', 'service'] : ['service', 'floor'];
    for (const name of order) {
      const side = name === 'floor' ? floor : service;
      batches[name].push(...(await tenAtOnce(side)));
      await side.settled();
    }
  }
  const floorName = 'floor, alternating with the service';
  const serviceName = `service, local Chromium, warm pool of ${DEFAULT_WARM_BROWSERS} (the default), alternating with the floor`;
  return {
    floor: [c1Row(floorName, runs.floor, cpuMs.floor), c10Row(floorName, batches.floor)],
    service: [c1Row(serviceName, runs.service, cpuMs.service), c10Row(serviceName, batches.service)].map((serviceRow) => ({ ...serviceRow, recordingsFailed: service.recordingsFailed() })),
  };
}

/** c1 back to back (no pause between cycles) and, with `c10`, batches of ten at once. */
async function measureBackToBack(setup: string, side: Side, options: { c10: boolean }): Promise<Row[]> {
  await side.cycle(); // Warm-up: disk caches, the JIT, the first connection.
  await side.settled();
  // Counted over each part, for a service.
  const failedSince = (before: number | undefined) => (side.recordingsFailed === undefined ? {} : { recordingsFailed: side.recordingsFailed() - before! });
  const failedBefore = side.recordingsFailed?.();
  const runs: Run[] = [];
  // From the first cycle's start to the last one's settling: what a cycle leaves running
  // (a browser closing, the pool's refill) is its cost, paid in the next cycle or at the end.
  const cpuBefore = machineCpuMs();
  for (let i = 0; i < CYCLES_C1; i += 1) runs.push(await side.cycle());
  await side.settled();
  const rows = [{ ...c1Row(setup, runs, machineCpuMs() - cpuBefore), ...failedSince(failedBefore) }];
  if (!options.c10) return rows;
  const failedBeforeC10 = side.recordingsFailed?.();
  const cycles: Array<PromiseSettledResult<Run>> = [];
  for (let batch = 0; batch < BATCHES_C10; batch += 1) {
    cycles.push(...(await tenAtOnce(side)));
    await side.settled();
  }
  return [...rows, { ...c10Row(setup, cycles), ...failedSince(failedBeforeC10) }];
}

function row(setup: string, concurrency: number, samples: number[]): Row {
  const sorted = [...samples].sort((a, b) => a - b);
  return { setup, concurrency, samples: sorted.length, p50Ms: Math.round(percentile(sorted, 50)), p95Ms: Math.round(percentile(sorted, 95)) };
}

/** Issue 26's goals, read on the alternating rows (each side's [c1, c10]). */
function goals(floor: Row[], service: Row[]) {
  const [floorC1, floorC10] = floor as [Row, Row];
  const [serviceC1, serviceC10] = service as [Row, Row];
  const c1VsFloor = Number((serviceC1.p50Ms / floorC1.p50Ms).toFixed(2));
  const c10VsFloor = Number((serviceC10.p50Ms / floorC10.p50Ms).toFixed(2));
  const deleteP50Ms = serviceC1.stepsP50Ms!.delete!;
  // The figures count only with every CDP connection's video stored: a failed one saves its encoding.
  const everyRecordingStored = serviceC10.recordingsFailed === 0;
  return {
    ...GOALS,
    c1P50Ms: serviceC1.p50Ms,
    c1VsFloor,
    deleteP50Ms,
    c10VsFloor,
    everyRecordingStored,
    c1Met: everyRecordingStored && serviceC1.p50Ms <= GOALS.c1P50MsAtMost && c1VsFloor <= GOALS.c1VsFloorAtMost,
    deleteMet: everyRecordingStored && deleteP50Ms <= GOALS.deleteP50MsAtMost,
    c10Met: everyRecordingStored && c10VsFloor <= GOALS.c10VsFloorAtMost && serviceC10.failed === undefined,
  };
}

async function main(): Promise<void> {
  const loadBefore = await machineLoad();
  const page = await startPage();
  const root = await mkdtemp(path.join(tmpdir(), 'bench-lifecycle-floor-'));
  // Bare profiles' browser uids must pass this folder, as the service's profiles folder lets them.
  await chmod(root, 0o711);
  const rows: Row[] = [];
  let goalsRead: ReturnType<typeof goals> | null = null;
  let browserless: BrowserlessServer | null = null;
  try {
    const floor = await floorCycle(root, page.url);
    if (SETUPS.has('warm')) {
      // As shipped: OPERATOR_WARM_BROWSERS defaults to 2.
      const warm = await serviceCycle({ OPERATOR_BROWSER: 'local', OPERATOR_WARM_BROWSERS: String(DEFAULT_WARM_BROWSERS) }, page.url);
      try {
        if (SETUPS.has('floor')) {
          const alternating = await measureAlternating(floor, warm);
          rows.push(...alternating.floor, ...alternating.service);
          goalsRead = goals(alternating.floor, alternating.service);
        }
        rows.push(...(await measureBackToBack(`service, local Chromium, warm pool of ${DEFAULT_WARM_BROWSERS} (the default), back to back`, warm, { c10: false })));
      } finally {
        await warm.service.stop();
        await rm(warm.dataDir, { recursive: true, force: true });
      }
    }
    if (SETUPS.has('floor')) rows.push(...(await measureBackToBack('floor, back to back', floor, { c10: !SETUPS.has('warm') })));

    if (SETUPS.has('local')) {
      const local = await serviceCycle({ OPERATOR_BROWSER: 'local' }, page.url);
      try {
        rows.push(...(await measureBackToBack('service, local Chromium, no warm pool', local, { c10: true })));
      } finally {
        await local.service.stop();
        await rm(local.dataDir, { recursive: true, force: true });
      }
    }

    if (SETUPS.has('browserless')) {
      browserless = await startBrowserlessServer({ concurrent: 12, queued: 0 });
      const remote = await serviceCycle({ OPERATOR_BROWSER: 'browserless', BROWSERLESS_URL: browserless.url }, page.url);
      try {
        rows.push(...(await measureBackToBack('service, browserless on this machine', remote, { c10: true })));
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
  console.log(JSON.stringify({ machine: machineDescription(), chromium: CHROMIUM_PATH, load, cyclesC1: CYCLES_C1, batchesC10: BATCHES_C10, rows, goals: goalsRead }, null, 2));
  console.log('\n| Setup | Concurrency | Samples | p50 (ms) | p95 (ms) | Mean (ms) | CPU per cycle (ms) | Steps at c1, p50 (ms) | Failed | Recordings failed |\n|---|---|---|---|---|---|---|---|---|---|');
  for (const { setup, concurrency, samples, p50Ms, p95Ms, meanMs, cpuMsPerCycle, stepsP50Ms, failed, recordingsFailed } of rows) {
    const steps = stepsP50Ms === undefined ? '' : Object.entries(stepsP50Ms).map(([name, ms]) => `${name} ${ms}`).join(', ');
    console.log(`| ${setup} | c${concurrency} | ${samples} | ${p50Ms} | ${p95Ms} | ${meanMs ?? ''} | ${cpuMsPerCycle ?? ''} | ${steps} | ${failed === undefined ? '' : `${failed.cycles}: ${failed.first}`} | ${recordingsFailed ?? ''} |`);
  }
}

await main();
