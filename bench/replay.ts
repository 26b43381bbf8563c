import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectDatabase } from '../db/client';
import { createApiKey, createOrganization, createSpace } from '../server/domain/orgs/operator-admin';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer, type ScriptedReply } from '../test/support/scripted-openai-server';
import { machineDescription, percentile, startServiceProcess } from '../test/support/service-process';
import { startSignupPages, type SignupPages } from '../test/support/signup-pages';
import { cpuBusyFraction } from './machine-load';

// `npm run bench:replay`, through the real service in its own process on the model planner,
// against the scripted OpenAI-compatible endpoint the tests use: per-step time and model
// calls of a task replayed from its cache entry (a hit) against the same task planned by the
// model, in alternating runs on one device each. The scripted model answers after
// BENCH_MODEL_DELAY_MS (default 0: the planner's figure is then the service's own cost of a
// planned step, a floor under any real model's, which takes one to several seconds a call).
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const MODEL_DELAY_MS = Number(process.env.BENCH_MODEL_DELAY_MS ?? 0);
const STEPS = 4;
const PROMPT = 'Sign up to the newsletter as grace@example.com and tell me what the page says.';

type Call = (method: string, route: string, body?: unknown) => Promise<{ status: number; body: any }>;

const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The four decisions of the sign-up task, as the model would send them. */
function script(model: ScriptedOpenAiServer, pages: SignupPages): void {
  const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({ toolCalls: [{ name, arguments: args }], delayMs: MODEL_DELAY_MS });
  model.push(
    call('navigate', { url: `${pages.base}/signup` }),
    call('type', { text: 'grace@example.com', target: 'Email' }),
    call('click', { target: 'Subscribe' }),
    call('extract_text', { selector: '#message' }),
  );
}

/** Resolves when the task's event stream sends `done`, with the terminal task. */
async function untilDone(baseUrl: string, key: string, taskId: string): Promise<any> {
  const response = await fetch(`${baseUrl}/v1/tasks/${taskId}/events`, { headers: { Authorization: `Bearer ${key}` } });
  const done = /event: done\ndata: (.*)\n/.exec(await response.text());
  if (done === null) throw new Error(`stream of ${taskId} ended without done`);
  return JSON.parse(done[1]!);
}

/** One task; its time per step as the service measured it (created_at → finished_at), and its model calls. */
async function runTask(call: Call, baseUrl: string, key: string, device: string, body: Record<string, unknown>): Promise<{ perStepMs: number; modelCalls: number; outcome: string | null }> {
  const submitted = await call('POST', `/devices/${device}/tasks`, body);
  if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}: ${JSON.stringify(submitted.body)}`);
  const task = await untilDone(baseUrl, key, submitted.body.id);
  if (task.status !== 'succeeded' || task.result !== 'Welcome, grace@example.com') throw new Error(`bench task ended ${task.status}: ${JSON.stringify(task.result)}`);
  return { perStepMs: (Date.parse(task.finished_at) - Date.parse(task.created_at)) / STEPS, modelCalls: task.usage.model_calls, outcome: task.cache?.outcome ?? null };
}

async function main(): Promise<void> {
  const pages = await startSignupPages();
  const model = await startScriptedOpenAiServer();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-replay-'));
  const service = await startServiceProcess({
    OPERATOR_DATA_DIR: dataDir,
    CHROMIUM_PATH,
    OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
    OPERATOR_RATE_LIMIT_PER_SEC: '1000',
    OPERATOR_RATE_LIMIT_BURST: '2000',
    OPERATOR_MODEL_BASE_URL: model.baseUrl,
    OPERATOR_MODEL_API_KEY: 'sk-bench',
    OPERATOR_MODEL: 'scripted-model',
  });
  try {
    const database = connectDatabase(service.database.url, 2);
    const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const { space_id: spaceId } = await createSpace(database.db, orgId, 'bench');
    const { key } = await createApiKey(database.db, { orgId, scopes: ['operator:devices:write', 'operator:tasks:write', 'operator:tasks:read'], spaceIds: [], env: 'test' });
    await database.close();
    const call: Call = (method, route, body) =>
      fetch(`${service.url}/v1${route}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const device = async () => {
      const created = await call('POST', '/devices', { space_id: spaceId });
      if (created.status !== 201) throw new Error(`device create answered ${created.status}`);
      return created.body.id as string;
    };
    const plannerDevice = await device();
    const replayDevice = await device();

    // Untimed: the miss that stores the entry, and one planner run to warm up.
    script(model, pages);
    const miss = await runTask(call, service.url, key, replayDevice, { prompt: PROMPT, cache_key: 'bench.signup' });
    if (miss.outcome !== 'miss') throw new Error(`the first run was a ${miss.outcome}`);
    script(model, pages);
    await runTask(call, service.url, key, plannerDevice, { prompt: PROMPT });

    const busy = await cpuBusyFraction();
    const planned: Array<{ perStepMs: number; modelCalls: number }> = [];
    const replayed: Array<{ perStepMs: number; modelCalls: number }> = [];
    for (let run = 0; run < RUNS; run += 1) {
      const plan = async () => {
        script(model, pages);
        planned.push(await runTask(call, service.url, key, plannerDevice, { prompt: PROMPT }));
      };
      const replay = async () => {
        const hit = await runTask(call, service.url, key, replayDevice, { prompt: PROMPT, cache_key: 'bench.signup' });
        if (hit.outcome !== 'hit') throw new Error(`a replay was a ${hit.outcome}`);
        replayed.push(hit);
      };
      if (run % 2 === 0) await plan().then(replay);
      else await replay().then(plan);
    }
    const side = (runs: Array<{ perStepMs: number; modelCalls: number }>) => {
      const steps = runs.map((run) => run.perStepMs).sort((a, b) => a - b);
      return { perStepMeanMs: round(mean(steps)), perStepP50Ms: round(percentile(steps, 50)), modelCallsPerTask: mean(runs.map((run) => run.modelCalls)) };
    };
    console.log(
      JSON.stringify(
        {
          machine: machineDescription(),
          cpuBusyBefore: round(busy, 2),
          runs: RUNS,
          steps: STEPS,
          modelDelayMs: MODEL_DELAY_MS,
          planner: side(planned),
          hit: side(replayed),
          perStepRatio: round(mean(replayed.map((run) => run.perStepMs)) / mean(planned.map((run) => run.perStepMs)), 2),
        },
        null,
        2,
      ),
    );
  } finally {
    await service.stop();
    await model.close();
    await pages.close();
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
