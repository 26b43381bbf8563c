import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectDatabase } from '../db/client';
import { createApiKey, createOrganization, createSpace } from '../server/domain/orgs/operator-admin';
import { startServiceProcess, type ServiceProcess } from '../test/support/service-process';
import { startTaskPages, type TaskPages } from '../test/support/task-pages';
import { machineLoad, type MachineLoad } from './machine-load';

// The five-step form task the task benchmarks run (bench:tasks, bench:density), through
// the service's API with the offline planner.

export const FORM_TASK_STEPS = 5;

export type Call = (method: string, route: string, body?: unknown) => Promise<{ status: number; body: any }>;

export const formPrompt = (pages: TaskPages, email: string) =>
  `go to ${pages.url('/form')} then type "${email}" into "Email" then click "Submit" then wait for "Welcome" then return the text of "#message"`;

/** Resolves when the task's event stream sends `done`, with the terminal task. */
export async function untilDone(baseUrl: string, key: string, taskId: string): Promise<any> {
  const response = await fetch(`${baseUrl}/v1/tasks/${taskId}/events`, { headers: { Authorization: `Bearer ${key}` } });
  const text = await response.text();
  const done = /event: done\ndata: (.*)\n/.exec(text);
  if (done === null) throw new Error(`stream of ${taskId} ended without done`);
  return JSON.parse(done[1]!);
}

/** One run of the form task by the agent: its time per step as the service measured it (created_at → finished_at). */
export async function agentRun(call: Call, baseUrl: string, key: string, deviceId: string, pages: TaskPages, email: string): Promise<number> {
  const submitted = await call('POST', `/v1/devices/${deviceId}/tasks`, { prompt: formPrompt(pages, email) });
  if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}`);
  const task = await untilDone(baseUrl, key, submitted.body.id);
  if (task.status !== 'succeeded') throw new Error(`bench task ended ${task.status}: ${JSON.stringify(task.result)}`);
  return (Date.parse(task.finished_at) - Date.parse(task.created_at)) / FORM_TASK_STEPS;
}

/** An organization with a Space and a key for the task benchmarks, on the service's database; `call` uses the key. */
export async function benchTenant(service: ServiceProcess): Promise<{ key: string; spaceId: string; call: Call }> {
  const database = connectDatabase(service.database.url, 2);
  try {
    const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const { space_id: spaceId } = await createSpace(database.db, orgId, 'bench');
    const { key } = await createApiKey(database.db, { orgId, scopes: ['operator:devices:write', 'operator:tasks:write', 'operator:tasks:read'], spaceIds: [], env: 'test' });
    const call: Call = (method, route, body) =>
      fetch(`${service.url}${route}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, body: await response.json() }));
    return { key, spaceId, call };
  } finally {
    await database.close();
  }
}

/** What a task benchmark runs against: the service in its own process, the task pages, and a tenant. */
export interface BenchService {
  /** The machine's load before anything of the benchmark started. */
  loadBefore: MachineLoad;
  service: ServiceProcess;
  pages: TaskPages;
  key: string;
  spaceId: string;
  call: Call;
}

/**
 * Runs `bench` as a benchmark's main: against a service started in its own process with
 * `env` (on a data directory of its own; loopback pages allowed, rate limits out of the
 * way), the task pages and a tenant; everything is stopped and removed after. A failure
 * is printed and exits 1.
 */
export function runTaskBench(name: string, env: Record<string, string>, bench: (context: BenchService) => Promise<void>): void {
  (async () => {
    const loadBefore = await machineLoad();
    const pages = await startTaskPages();
    const dataDir = await mkdtemp(path.join(tmpdir(), `bench-${name}-`));
    const service = await startServiceProcess({
      OPERATOR_DATA_DIR: dataDir,
      // The task pages are served on loopback, which the egress policy closes by default.
      OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
      OPERATOR_RATE_LIMIT_PER_SEC: '1000',
      OPERATOR_RATE_LIMIT_BURST: '2000',
      ...env,
    });
    try {
      await bench({ loadBefore, service, pages, ...(await benchTenant(service)) });
    } finally {
      await service.stop();
      await pages.close();
      // Chromium may still be flushing its profile for a moment after the service exits.
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
  })().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
