import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { CHROMIUM_FLAGS } from '../server/browser/local-provider';
import { launchChromiumAsTheService } from '../test/support/browser-fixtures';
import { machineDescription, percentile } from '../test/support/service-process';
import type { TaskPages } from '../test/support/task-pages';
import { agentRun, FORM_TASK_STEPS, formPrompt, runTaskBench, untilDone, type Call } from './form-task';
import { untilRecordingsStored } from './recordings-settled';
import { machineLoad } from './machine-load';

// `npm run bench:tasks`, through the real service in its own process with the offline planner:
// 1. per-step time of the agent running a form task on a local page, against the same
//    five actions done directly with puppeteer-core on the same Chromium, run by run alternating;
// 2. submit latency (POST /v1/devices/{id}/tasks → 202), p50/p99;
// 3. throughput of 10 devices running tasks at once;
// 4. ten at once: 10 devices each running the form task at the same moment, against the
//    same five actions done at the same moment directly with puppeteer-core on 10 bare
//    browsers, in alternating rounds: wall time and per-step time.
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The local provider's own flags, for a fair comparison. */
const FLAGS = CHROMIUM_FLAGS;
const STEPS = FORM_TASK_STEPS;
const OVERHEAD_RUNS = Number(process.env.BENCH_RUNS ?? 20);
const SUBMITS = Number(process.env.BENCH_SUBMITS ?? 200);
const DEVICES = 10;
const TASKS_PER_DEVICE = Number(process.env.BENCH_TASKS_PER_DEVICE ?? 5);
const PARALLEL_ROUNDS = Number(process.env.BENCH_PARALLEL_ROUNDS ?? 4);
/** Only the per-step comparison (BENCH_PER_STEP_ONLY=1): the parts after it need a machine that is not saturated. */
const PER_STEP_ONLY = process.env.BENCH_PER_STEP_ONLY === '1';

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** The form task's five actions, directly with puppeteer-core; returns the time per step. */
async function directRun(page: Page, pages: TaskPages, email: string): Promise<number> {
  const started = performance.now();
  await page.goto(pages.url('/form'), { waitUntil: 'load' });
  await page.type('#email', email);
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('button[type=submit]')]);
  await page.waitForFunction(() => document.body.innerText.includes('Welcome'));
  const text = await page.$eval('#message', (element) => (element as HTMLElement).innerText);
  if (!text.startsWith('Welcome')) throw new Error('direct run did not reach the result page');
  return (performance.now() - started) / STEPS;
}

/**
 * Waits until the service encoded and stored every recording (they are encoded after their
 * runs): each side of a comparison starts on a machine the other side's work has left,
 * so the agent's encodings are not charged to direct puppeteer's runs. Returns how long it
 * waited.
 */
type Settle = () => Promise<number>;

/**
 * Per step at one device: the agent's runs and the same five actions directly with
 * puppeteer-core on a bare browser, alternating (agent first in even rounds, direct first
 * in odd ones), so both sides of the ratio meet the same machine, each once the
 * recordings before it are stored. Round -1 of each warms the page, the JIT and the
 * connection pool and is not counted.
 */
async function benchPerStep(call: Call, baseUrl: string, key: string, deviceId: string, pages: TaskPages, settle: Settle): Promise<{ agent: number[]; direct: number[] }> {
  const profile = await mkdtemp(path.join(tmpdir(), 'bench-tasks-direct-'));
  const browser = await launchChromiumAsTheService(profile, FLAGS, CHROMIUM_PATH);
  const agent: number[] = [];
  const direct: number[] = [];
  try {
    const page = await browser.newPage();
    for (let run = -1; run < OVERHEAD_RUNS; run += 1) {
      const email = `run${run}@example.com`;
      const sides = [async () => agent.push(await agentRun(call, baseUrl, key, deviceId, pages, email)), async () => direct.push(await directRun(page, pages, email))];
      if (run % 2 !== 0) sides.reverse();
      for (const side of sides) {
        await settle();
        await side();
      }
      if (run === -1) {
        agent.length = 0;
        direct.length = 0;
      }
    }
  } finally {
    await browser.close();
    await rm(profile, { recursive: true, force: true });
  }
  return { agent, direct };
}

/** Submit latency; each accepted task is canceled (untimed) so the slot is free again. */
async function benchSubmit(call: Call, deviceIds: string[]): Promise<number[]> {
  const latencies: number[] = [];
  for (let index = 0; index < SUBMITS; index += 1) {
    const device = deviceIds[index % deviceIds.length]!;
    const started = performance.now();
    const submitted = await call('POST', `/v1/devices/${device}/tasks`, { prompt: 'scroll down' });
    latencies.push(performance.now() - started);
    if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}`);
    await call('POST', `/v1/tasks/${submitted.body.id}/cancel`);
  }
  return latencies.sort((a, b) => a - b);
}

/** 10 devices, each running TASKS_PER_DEVICE form tasks back to back, all devices at once. */
async function benchThroughput(call: Call, baseUrl: string, key: string, deviceIds: string[], pages: TaskPages) {
  const started = performance.now();
  const durations: number[] = [];
  await Promise.all(
    deviceIds.map(async (device, deviceIndex) => {
      for (let index = 0; index < TASKS_PER_DEVICE; index += 1) {
        const submitted = await call('POST', `/v1/devices/${device}/tasks`, { prompt: formPrompt(pages, `d${deviceIndex}t${index}@example.com`) });
        if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}`);
        const task = await untilDone(baseUrl, key, submitted.body.id);
        if (task.status !== 'succeeded') throw new Error(`throughput task ended ${task.status}`);
        durations.push(Date.parse(task.finished_at) - Date.parse(task.created_at));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const tasks = deviceIds.length * TASKS_PER_DEVICE;
  durations.sort((a, b) => a - b);
  return {
    devices: deviceIds.length,
    tasks,
    wallSecs: round(seconds),
    tasksPerSec: round(tasks / seconds, 2),
    stepsPerSec: round((tasks * STEPS) / seconds, 1),
    taskP50Ms: Math.round(percentile(durations, 50)),
    taskP95Ms: Math.round(percentile(durations, 95)),
  };
}

interface ParallelSide {
  wallMs: number[];
  perStepMs: number[];
}

/**
 * Ten at once, in PARALLEL_ROUNDS alternating rounds (after one untimed round each): every
 * device runs the form task at the same moment (per step: the service's created_at →
 * finished_at / 5), against 10 bare browsers, launched beforehand, running the same
 * actions at the same moment. Each round starts once the recordings before it are stored;
 * how long that took after an agent round is the encodings' own figure.
 */
async function benchTenAtOnce(call: Call, baseUrl: string, key: string, deviceIds: string[], pages: TaskPages, settle: Settle) {
  const root = await mkdtemp(path.join(tmpdir(), 'bench-tasks-ten-'));
  await chmod(root, 0o711);
  const browsers: Browser[] = [];
  const agent: ParallelSide = { wallMs: [], perStepMs: [] };
  const direct: ParallelSide = { wallMs: [], perStepMs: [] };
  const storedAfterAgentMs: number[] = [];
  try {
    for (let index = 0; index < deviceIds.length; index += 1) browsers.push(await launchChromiumAsTheService(path.join(root, String(index)), FLAGS, CHROMIUM_PATH));
    const directPages = await Promise.all(browsers.map((browser) => browser.newPage()));
    const agentRound = async (round: number, record: boolean) => {
      await settle();
      const started = performance.now();
      const steps = await Promise.all(
        deviceIds.map(async (device, index) => {
          const submitted = await call('POST', `/v1/devices/${device}/tasks`, { prompt: formPrompt(pages, `ten${round}-${index}@example.com`) });
          if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}`);
          const task = await untilDone(baseUrl, key, submitted.body.id);
          if (task.status !== 'succeeded') throw new Error(`ten-at-once task ended ${task.status}`);
          return (Date.parse(task.finished_at) - Date.parse(task.created_at)) / STEPS;
        }),
      );
      if (!record) return;
      agent.wallMs.push(performance.now() - started);
      agent.perStepMs.push(...steps);
      storedAfterAgentMs.push(await settle());
    };
    const directRound = async (round: number, record: boolean) => {
      await settle();
      const started = performance.now();
      const steps = await Promise.all(directPages.map((page, index) => directRun(page, pages, `ten${round}-${index}@example.com`)));
      if (!record) return;
      direct.wallMs.push(performance.now() - started);
      direct.perStepMs.push(...steps);
    };
    await agentRound(-1, false);
    await directRound(-1, false);
    for (let round = 0; round < PARALLEL_ROUNDS; round += 1) {
      if (round % 2 === 0) await agentRound(round, true).then(() => directRound(round, true));
      else await directRound(round, true).then(() => agentRound(round, true));
    }
  } finally {
    await Promise.all(browsers.map((browser) => browser.close()));
    await rm(root, { recursive: true, force: true });
  }
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const side = (figures: ParallelSide) => ({
    wallMeanMs: Math.round(mean(figures.wallMs)),
    perStepMeanMs: round(mean(figures.perStepMs)),
    perStepP50Ms: round(percentile(sorted(figures.perStepMs), 50)),
    perStepP95Ms: round(percentile(sorted(figures.perStepMs), 95)),
  });
  return {
    devices: deviceIds.length,
    rounds: PARALLEL_ROUNDS,
    agent: side(agent),
    directPuppeteer: side(direct),
    perStepRatio: round(mean(agent.perStepMs) / mean(direct.perStepMs), 2),
    /** After each agent round, how long until its ten recordings were encoded and stored. */
    recordingsStoredAfterMs: sorted(storedAfterAgentMs).map(Math.round),
  };
}

runTaskBench('tasks', { CHROMIUM_PATH, OPERATOR_MAX_BROWSERS: '20', OPERATOR_TASK_WORKERS: '20' }, async ({ loadBefore, service, pages, key, spaceId, call }) => {
  const deviceIds: string[] = [];
  for (let index = 0; index < DEVICES; index += 1) {
    const created = await call('POST', '/v1/devices', { space_id: spaceId });
    if (created.status !== 201) throw new Error(`device create answered ${created.status}`);
    deviceIds.push(created.body.id);
  }

  const settle: Settle = async () => (await untilRecordingsStored(service)).storedAfterMs;
  const { agent, direct } = await benchPerStep(call, service.url, key, deviceIds[0]!, pages, settle);
  const agentMean = agent.reduce((sum, value) => sum + value, 0) / agent.length;
  const directMean = direct.reduce((sum, value) => sum + value, 0) / direct.length;
  // The first figure on its own at once: a later part may not finish on a saturated machine.
  console.error(JSON.stringify({ perStep: { agentMeanMs: round(agentMean), directPuppeteerMeanMs: round(directMean), ratio: round(agentMean / directMean, 2) }, load: await machineLoad(500) }));
  if (PER_STEP_ONLY) return;
  const submit = await benchSubmit(call, deviceIds);
  const throughput = await benchThroughput(call, service.url, key, deviceIds, pages);
  const tenAtOnce = await benchTenAtOnce(call, service.url, key, deviceIds, pages, settle);
  // Recordings are encoded after their tasks: the figures hold only if every one of them is stored.
  const recordingsStored = await untilRecordingsStored(service);
  const load = { before: loadBefore, after: await machineLoad() };

  console.log(
    JSON.stringify(
      {
        machine: machineDescription(),
        chromium: CHROMIUM_PATH,
        load,
        perStep: {
          steps: STEPS,
          runs: OVERHEAD_RUNS,
          agentMeanMs: round(agentMean),
          agentP50Ms: round(percentile([...agent].sort((a, b) => a - b), 50)),
          directPuppeteerMeanMs: round(directMean),
          directPuppeteerP50Ms: round(percentile([...direct].sort((a, b) => a - b), 50)),
          ratio: round(agentMean / directMean, 2),
        },
        submit: { count: SUBMITS, p50Ms: round(percentile(submit, 50)), p99Ms: round(percentile(submit, 99)) },
        throughput,
        tenAtOnce,
        recordings: recordingsStored,
        goals: { perStepRatioAtMost: 1.3, perStepMet: agentMean / directMean <= 1.3, tenAtOnceRatioAtMost: 1.5, tenAtOnceMet: tenAtOnce.perStepRatio <= 1.5 },
      },
      null,
      2,
    ),
  );
});
