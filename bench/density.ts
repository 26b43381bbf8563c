import { freemem, totalmem } from 'node:os';
import { machineDescription } from '../test/support/service-process';
import type { TaskPages } from '../test/support/task-pages';
import { agentRun, runTaskBench, type Call } from './form-task';
import { untilRecordingsStored } from './recordings-settled';
import { machineLoad } from './machine-load';

// `npm run bench:density`: how many devices one host holds before the five-step form task's
// time per step doubles, recordings and step pictures on (the defaults), through the service
// in its own process with the offline planner:
// 1. running devices: k devices each run the task at the same moment, for k = 1, 2, 3, ...;
//    per step: the mean of the service's created_at → finished_at / 5 over ROUNDS rounds;
// 2. idle devices: one device runs the task (ROUNDS runs) while IDLE_STEP more idle devices
//    are created at each level, up to BENCH_MAX_IDLE.
// Each part stops at the first level whose per-step time is twice the first level's or more.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MAX_RUNNING = Number(process.env.BENCH_MAX_RUNNING ?? 8);
const IDLE_STEP = Number(process.env.BENCH_IDLE_STEP ?? 8);
const MAX_IDLE = Number(process.env.BENCH_MAX_IDLE ?? 64);

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const round = (value: number) => Math.round(value * 10) / 10;

interface Level {
  devices: number;
  perStepMs: number;
  ofFirst: number;
}

async function newDevice(call: Call, spaceId: string): Promise<string> {
  const created = await call('POST', '/v1/devices', { space_id: spaceId });
  if (created.status !== 201) throw new Error(`device create answered ${created.status}: ${JSON.stringify(created.body)}`);
  return created.body.id;
}

/** Per step of `running` devices each running the task at once, ROUNDS rounds (after one untimed). */
async function perStepOf(call: Call, baseUrl: string, key: string, running: string[], pages: TaskPages): Promise<number> {
  const times: number[] = [];
  for (let round = -1; round < ROUNDS; round += 1) {
    const steps = await Promise.all(running.map((device, index) => agentRun(call, baseUrl, key, device, pages, `d${index}r${round}@example.com`)));
    if (round >= 0) times.push(...steps);
  }
  return mean(times);
}

/** Adds a level; true while its per-step time is under twice the first level's. */
function record(levels: Level[], devices: number, perStepMs: number): boolean {
  const ofFirst = levels.length === 0 ? 1 : perStepMs / levels[0]!.perStepMs;
  levels.push({ devices, perStepMs: round(perStepMs), ofFirst: Math.round(ofFirst * 100) / 100 });
  console.error(JSON.stringify(levels.at(-1)));
  return ofFirst < 2;
}

const capacity = MAX_IDLE + MAX_RUNNING + 2;
runTaskBench('density', { OPERATOR_MAX_BROWSERS: String(capacity), OPERATOR_TASK_WORKERS: String(MAX_RUNNING + 2) }, async ({ loadBefore, service, pages, key, spaceId, call }) => {
  const running: Level[] = [];
  const devices: string[] = [];
  for (let count = 1; count <= MAX_RUNNING; count += 1) {
    devices.push(await newDevice(call, spaceId));
    if (!record(running, count, await perStepOf(call, service.url, key, devices, pages))) break;
  }
  for (const device of devices) await call('DELETE', `/v1/devices/${device}`);

  const idle: Level[] = [];
  const worker = await newDevice(call, spaceId);
  const idleDevices: string[] = [];
  const memoryBefore = totalmem() - freemem();
  for (;;) {
    if (!record(idle, idleDevices.length, await perStepOf(call, service.url, key, [worker], pages))) break;
    if (idleDevices.length + IDLE_STEP > MAX_IDLE) break;
    for (let index = 0; index < IDLE_STEP; index += 1) idleDevices.push(await newDevice(call, spaceId));
  }
  const memoryPerIdleMiB = idleDevices.length === 0 ? null : Math.round((totalmem() - freemem() - memoryBefore) / idleDevices.length / 2 ** 20);
  // Recordings are encoded after their tasks: the levels hold only if every one of them is stored.
  const recordings = await untilRecordingsStored(service);

  console.log(
    JSON.stringify(
      {
        machine: machineDescription(),
        load: { before: loadBefore, after: await machineLoad() },
        rounds: ROUNDS,
        running,
        runningBeforeDoubling: running.filter((level) => level.ofFirst < 2).at(-1)?.devices ?? 0,
        idle,
        idleBeforeDoubling: idle.filter((level) => level.ofFirst < 2).at(-1)?.devices ?? 0,
        idleCapped: idle.every((level) => level.ofFirst < 2),
        hostMemoryPerIdleDeviceMiB: memoryPerIdleMiB,
        recordings,
      },
      null,
      2,
    ),
  );
});
