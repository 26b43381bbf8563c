import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import { connectDatabase } from '../db/client';
import { createApiKey, createOrganization, createSpace } from '../server/domain/orgs/operator-admin';
import { machineDescription, percentile, startServiceProcess } from '../test/support/service-process';
import { CHROMIUM_FLAGS } from '../server/browser/local-provider';
import { launchChromiumAsTheService } from '../test/support/browser-fixtures';

// `npm run bench:devices`: device create latency (POST /v1/devices, through the real
// service in its own process) and resident memory per active device at 1, 5 and 10
// devices; in the same run, in alternating rounds, the floor (a bare puppeteer-core launch
// plus its blank page, same Chromium and flags); then the alternative design (a device as
// an isolated browser context inside one shared browser per organization); then the warm
// pool: creates that take a browser launched ahead, one at a time (c1) and ten at once
// (c10), and what the idle warm browsers cost in memory; then a sleeping device's wake
// against a bare launch on its own profile.
const COUNTS = [1, 5, 10];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The local provider's own flags, uid and sandbox, for a fair floor. */
const FLAGS = CHROMIUM_FLAGS;
/** Warm browsers kept for the warm-pool run: enough for ten creates at once. */
const WARM = 10;
const WARM_C1_CREATES = Number(process.env.BENCH_WARM_CREATES ?? 20);
const WAKES = Number(process.env.BENCH_WAKES ?? 10);

interface Memory {
  /** Sum of VmRSS over the process trees (shared pages counted once per process). */
  rssMiB: number;
  /** Sum of proportional set sizes: shared pages split between their users. */
  pssMiB: number;
}

interface Figures {
  count: number;
  createP50Ms: number;
  createP95Ms: number;
  /** Floor only: launch plus a puppeteer Page object for the blank page. */
  withPageP50Ms?: number;
  rssPerDeviceMiB: number;
  pssPerDeviceMiB: number;
}

/** Every process whose group is led by one of `leaders` (Chromium leads its own group). */
async function groupMemory(leaders: number[]): Promise<Memory> {
  const wanted = new Set(leaders);
  let rssKb = 0;
  let pssKb = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (!wanted.has(Number(fields[2]))) continue;
      rssKb += kb(await readFile(`/proc/${entry}/status`, 'utf8'), 'VmRSS');
      pssKb += kb(await readFile(`/proc/${entry}/smaps_rollup`, 'utf8'), 'Pss');
    } catch {
      // The process exited while being read.
    }
  }
  return { rssMiB: rssKb / 1024, pssMiB: pssKb / 1024 };
}

function kb(text: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

function figures(count: number, latencies: number[], memory: Memory): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count,
    createP50Ms: Math.round(percentile(sorted, 50)),
    createP95Ms: Math.round(percentile(sorted, 95)),
    rssPerDeviceMiB: Math.round(memory.rssMiB / count),
    pssPerDeviceMiB: Math.round(memory.pssMiB / count),
  };
}

async function settle(): Promise<void> {
  // Chromium's start-up allocations settle within a second or two of the first page.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
}

async function launchBare(userDataDir: string): Promise<Browser> {
  return launchChromiumAsTheService(userDataDir, FLAGS, CHROMIUM_PATH);
}

/** A folder for bare profiles that their browser uids may pass (as the service's profiles folder lets them). */
async function profilesFolder(prefix: string): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(root, 0o711);
  return root;
}

/** Latencies of one batch of N creates, and the memory of the N browsers once settled. */
interface Batch {
  latencies: number[];
  memory: Memory;
  /** Floor only: launch plus a puppeteer Page object for the blank page. */
  withPage?: number[];
}

interface ServiceBench {
  batch(count: number): Promise<Batch>;
  stop(): Promise<void>;
}

/** The real service in its own process; each batch creates N devices, measures, deletes them. */
async function startServiceBench(): Promise<ServiceBench> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-devices-'));
  const service = await startServiceProcess({ OPERATOR_DATA_DIR: dataDir, CHROMIUM_PATH, OPERATOR_MAX_BROWSERS: '20', OPERATOR_RATE_LIMIT_PER_SEC: '1000', OPERATOR_RATE_LIMIT_BURST: '1000' });
  const database = connectDatabase(service.database.url, 2);
  const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { space_id: spaceId } = await createSpace(database.db, orgId, 'bench');
  const { key } = await createApiKey(database.db, { orgId, scopes: ['operator:devices:write'], spaceIds: [], env: 'test' });
  await database.close();
  const call = (method: string, route: string, body?: unknown) =>
    fetch(`${service.url}${route}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as { id: string } }));

  // One warm-up device: the first launch pays for disk caches and the JIT.
  const warm = await call('POST', '/v1/devices', { space_id: spaceId });
  await call('DELETE', `/v1/devices/${warm.body.id}`);
  return {
    async batch(count) {
      const ids: string[] = [];
      const latencies: number[] = [];
      for (let i = 0; i < count; i += 1) {
        const started = performance.now();
        const created = await call('POST', '/v1/devices', { space_id: spaceId });
        latencies.push(performance.now() - started);
        if (created.status !== 201) throw new Error(`create answered ${created.status}`);
        ids.push(created.body.id);
      }
      await settle();
      const pids = await Promise.all(
        ids.map(async (id) => Number((await readFile(path.join(dataDir, 'profiles', id.slice('dev_'.length), 'chromium.pid'), 'utf8')).trim())),
      );
      const memory = await groupMemory(pids);
      for (const id of ids) await call('DELETE', `/v1/devices/${id}`);
      return { latencies, memory };
    },
    async stop() {
      await service.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The floor: N separate bare browsers. puppeteer.launch resolves once Chromium's
 * initial blank page exists, which is where a device create stops too (its Page object
 * is made on first use); the time to also get that Page object is reported aside.
 */
async function bareBatch(root: string, label: string, count: number): Promise<Batch> {
  const browsers: Browser[] = [];
  const latencies: number[] = [];
  const withPage: number[] = [];
  const pagesReady: Promise<void>[] = [];
  try {
    for (let i = 0; i < count; i += 1) {
      const started = performance.now();
      const browser = await launchBare(path.join(root, `${label}-${i}`));
      latencies.push(performance.now() - started);
      browsers.push(browser);
      // Not awaited before the next launch: a pause here lets each Chromium finish
      // starting up first, which back-to-back device creates do not get (it made the
      // floor look 1.4x faster at ten browsers).
      pagesReady.push(
        browser.pages().then(async (pages) => {
          pages[0] ?? (await browser.newPage());
          withPage.push(performance.now() - started);
        }),
      );
    }
    await Promise.all(pagesReady);
    await settle();
    return { latencies, withPage, memory: await groupMemory(browsers.map((browser) => browser.process()!.pid!)) };
  } finally {
    await Promise.all(browsers.map((browser) => browser.close()));
  }
}

/**
 * Device creates and the floor, in ROUNDS alternating rounds at every N, so that both
 * meet the same machine: a Chromium launch takes about a second of CPU on two cores, and
 * one batch of ten moves by a few hundred milliseconds with whatever else runs.
 */
async function benchServiceAndFloor(): Promise<{ service: Figures[]; bare: Figures[] }> {
  const root = await profilesFolder('bench-bare-');
  const serviceBench = await startServiceBench();
  const serviceBatches = new Map<number, Batch[]>(COUNTS.map((count) => [count, []]));
  const bareBatches = new Map<number, Batch[]>(COUNTS.map((count) => [count, []]));
  try {
    await (await launchBare(path.join(root, 'warm'))).close();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const count of COUNTS) {
        const measureService = async () => serviceBatches.get(count)!.push(await serviceBench.batch(count));
        const measureBare = async () => bareBatches.get(count)!.push(await bareBatch(root, `${round}-${count}`, count));
        if (round % 2 === 0) await measureService().then(measureBare);
        else await measureBare().then(measureService);
      }
    }
  } finally {
    await serviceBench.stop();
    await rm(root, { recursive: true, force: true });
  }
  return {
    service: COUNTS.map((count) => pooledFigures(count, serviceBatches.get(count)!)),
    bare: COUNTS.map((count) => pooledFigures(count, bareBatches.get(count)!)),
  };
}

/** Latency percentiles over every round's creates; memory averaged over the rounds. */
function pooledFigures(count: number, batches: Batch[]): Figures {
  const memory = {
    rssMiB: batches.reduce((sum, batch) => sum + batch.memory.rssMiB, 0) / batches.length,
    pssMiB: batches.reduce((sum, batch) => sum + batch.memory.pssMiB, 0) / batches.length,
  };
  const row = figures(count, batches.flatMap((batch) => batch.latencies), memory);
  const withPage = batches.flatMap((batch) => batch.withPage ?? []);
  return withPage.length === 0 ? row : { ...row, withPageP50Ms: Math.round(percentile([...withPage].sort((a, b) => a - b), 50)) };
}

/** The alternative: one browser per organization, a device = its own context and page. */
async function benchSharedContexts(): Promise<{ browserLaunchMs: number; figures: Figures[] }> {
  const root = await profilesFolder('bench-contexts-');
  const results: Figures[] = [];
  let browserLaunchMs = 0;
  try {
    for (const count of COUNTS) {
      const started = performance.now();
      const browser = await launchBare(path.join(root, String(count)));
      browserLaunchMs = Math.round(performance.now() - started);
      const latencies: number[] = [];
      for (let i = 0; i < count; i += 1) {
        const began = performance.now();
        const context = await browser.createBrowserContext();
        await context.newPage();
        latencies.push(performance.now() - began);
      }
      // The default context's blank page is closed: only device pages remain.
      for (const page of await browser.defaultBrowserContext().pages()) await page.close();
      await settle();
      results.push(figures(count, latencies, await groupMemory([browser.process()!.pid!])));
      await browser.close();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return { browserLaunchMs, figures: results };
}

interface WarmFigures {
  warmBrowsers: number;
  c1: { creates: number; p50Ms: number; p95Ms: number };
  c10: { rounds: number; p50Ms: number; p95Ms: number };
  /** Resident memory of the idle warm browsers, per browser and for the default of 2. */
  idleRssPerWarmBrowserMiB: number;
  idlePssPerWarmBrowserMiB: number;
  idlePssDefaultPoolMiB: number;
}

/** The profile ids of warm browsers that have launched (marker and pid file present). */
async function launchedWarm(profilesRoot: string): Promise<number[]> {
  let ids: string[];
  try {
    ids = await readdir(path.join(profilesRoot, '.warm'));
  } catch {
    return [];
  }
  const pids = await Promise.all(ids.map((id) => readFile(path.join(profilesRoot, id, 'chromium.pid'), 'utf8').then((text) => Number(text.trim()), () => null)));
  return pids.filter((pid): pid is number => pid !== null);
}

/** Until all WARM browsers have launched, then a moment for their start-up CPU to end. */
async function untilWarm(profilesRoot: string): Promise<number[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const pids = await launchedWarm(profilesRoot);
    if (pids.length === WARM) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return pids;
    }
    if (Date.now() > deadline) throw new Error(`only ${pids.length} of ${WARM} warm browsers launched`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The warm pool: the real service with WARM browsers kept launched. c1: one create at a
 * time, each once the pool is full again; c10: ten creates at once on a full pool. The
 * devices are deleted after each measurement.
 */
async function benchWarmPool(): Promise<WarmFigures> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-warm-'));
  const profilesRoot = path.join(dataDir, 'profiles');
  const service = await startServiceProcess({
    OPERATOR_DATA_DIR: dataDir,
    CHROMIUM_PATH,
    OPERATOR_MAX_BROWSERS: String(WARM + 10),
    OPERATOR_WARM_BROWSERS: String(WARM),
    OPERATOR_RATE_LIMIT_PER_SEC: '1000',
    OPERATOR_RATE_LIMIT_BURST: '1000',
  });
  try {
    const database = connectDatabase(service.database.url, 2);
    const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const { space_id: spaceId } = await createSpace(database.db, orgId, 'bench');
    const { key } = await createApiKey(database.db, { orgId, scopes: ['operator:devices:write'], spaceIds: [], env: 'test' });
    await database.close();
    const call = (method: string, route: string, body?: unknown) =>
      fetch(`${service.url}${route}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as { id: string } }));
    const create = async (): Promise<{ id: string; ms: number }> => {
      const started = performance.now();
      const created = await call('POST', '/v1/devices', { space_id: spaceId });
      const ms = performance.now() - started;
      if (created.status !== 201) throw new Error(`create answered ${created.status}`);
      return { id: created.body.id, ms };
    };

    const idlePids = await untilWarm(profilesRoot);
    await settle();
    const idle = await groupMemory(idlePids);
    // One create first: the service's first request pays for its JIT.
    await call('DELETE', `/v1/devices/${(await create()).id}`);

    const c1: number[] = [];
    for (let i = 0; i < WARM_C1_CREATES; i += 1) {
      await untilWarm(profilesRoot);
      const device = await create();
      c1.push(device.ms);
      await call('DELETE', `/v1/devices/${device.id}`);
    }
    const c10: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      await untilWarm(profilesRoot);
      const devices = await Promise.all(Array.from({ length: 10 }, () => create()));
      c10.push(...devices.map((device) => device.ms));
      for (const device of devices) await call('DELETE', `/v1/devices/${device.id}`);
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const pssPerBrowser = idle.pssMiB / WARM;
    return {
      warmBrowsers: WARM,
      c1: { creates: c1.length, p50Ms: Math.round(percentile(sorted(c1), 50)), p95Ms: Math.round(percentile(sorted(c1), 95)) },
      c10: { rounds: ROUNDS, p50Ms: Math.round(percentile(sorted(c10), 50)), p95Ms: Math.round(percentile(sorted(c10), 95)) },
      idleRssPerWarmBrowserMiB: Math.round(idle.rssMiB / WARM),
      idlePssPerWarmBrowserMiB: Math.round(pssPerBrowser),
      idlePssDefaultPoolMiB: Math.round(2 * pssPerBrowser),
    };
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

interface WakeFigures {
  wakes: number;
  /** POST /v1/devices/{id}/wake of a sleeping device, on its own profile. */
  wakeP50Ms: number;
  wakeP95Ms: number;
  /** A bare launch (uid claim, profile handed over, Chromium started) on that same profile. */
  bareLaunchOnProfileP50Ms: number;
  bareLaunchOnProfileP95Ms: number;
}

/**
 * Wake against a bare launch on the device's own profile, alternating: the device sleeps,
 * then either wakes through the API or a bare Chromium starts on its profile (and closes).
 * The profile is one a device has used: a page was loaded, cookies written.
 */
async function benchWake(): Promise<WakeFigures> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-wake-'));
  const service = await startServiceProcess({ OPERATOR_DATA_DIR: dataDir, CHROMIUM_PATH, OPERATOR_MAX_BROWSERS: '4', OPERATOR_RATE_LIMIT_PER_SEC: '1000', OPERATOR_RATE_LIMIT_BURST: '1000' });
  const wakes: number[] = [];
  const bare: number[] = [];
  try {
    const database = connectDatabase(service.database.url, 2);
    const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const { space_id: spaceId } = await createSpace(database.db, orgId, 'bench');
    const { key } = await createApiKey(database.db, { orgId, scopes: ['operator:devices:write'], spaceIds: [], env: 'test' });
    await database.close();
    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${service.url}${route}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const parsed = (await response.json()) as { id: string };
      if (response.status >= 300) throw new Error(`${method} ${route} answered ${response.status}`);
      return parsed;
    };
    const device = await call('POST', '/v1/devices', { space_id: spaceId });
    const profileDir = path.join(dataDir, 'profiles', device.id.slice('dev_'.length));
    for (let round = -1; round < WAKES; round += 1) {
      await call('POST', `/v1/devices/${device.id}/sleep`);
      await settle();
      let started = performance.now();
      await call('POST', `/v1/devices/${device.id}/wake`);
      if (round >= 0) wakes.push(performance.now() - started);
      await call('POST', `/v1/devices/${device.id}/sleep`);
      await settle();
      started = performance.now();
      const browser = await launchBare(profileDir);
      if (round >= 0) bare.push(performance.now() - started);
      await browser.close();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await call('POST', `/v1/devices/${device.id}/wake`);
    }
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  return {
    wakes: wakes.length,
    wakeP50Ms: Math.round(percentile(sorted(wakes), 50)),
    wakeP95Ms: Math.round(percentile(sorted(wakes), 95)),
    bareLaunchOnProfileP50Ms: Math.round(percentile(sorted(bare), 50)),
    bareLaunchOnProfileP95Ms: Math.round(percentile(sorted(bare), 95)),
  };
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'wake') {
    console.log(JSON.stringify({ machine: machineDescription(), wake: await benchWake() }, null, 2));
    return;
  }
  const { service, bare } = await benchServiceAndFloor();
  const contexts = await benchSharedContexts();
  const warmPool = await benchWarmPool();
  const wake = await benchWake();
  const coldC1P50 = service[0]!.createP50Ms;
  const ratios = service.map((row, index) => ({
    count: row.count,
    createP50Ratio: Number((row.createP50Ms / bare[index]!.createP50Ms).toFixed(2)),
    rssRatio: Number((row.rssPerDeviceMiB / bare[index]!.rssPerDeviceMiB).toFixed(2)),
    pssRatio: Number((row.pssPerDeviceMiB / bare[index]!.pssPerDeviceMiB).toFixed(2)),
  }));
  console.log(
    JSON.stringify(
      {
        machine: machineDescription(),
        chromium: CHROMIUM_PATH,
        rounds: ROUNDS,
        devices: service,
        bareLaunchFloor: bare,
        sharedBrowserContexts: contexts,
        ratiosToFloor: ratios,
        warmPool,
        wake,
        warmGoalsMet: {
          c1P50AtMost40Ms: warmPool.c1.p50Ms <= 40,
          c1P95AtMost100Ms: warmPool.c1.p95Ms <= 100,
          c10P50AtMostColdC1P50: warmPool.c10.p50Ms <= coldC1P50,
        },
        goals: { createP50RatioAtMost: 1.3, memoryRatioAtMost: 1.1 },
      },
      null,
      2,
    ),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
