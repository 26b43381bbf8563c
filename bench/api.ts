import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { connectDatabase, type Db } from '../db/client';
import { applyMigrations } from '../db/migrate';
import { createApiKey, createOrganization } from '../server/domain/orgs/operator-admin';
import { freePort } from '../test/support/free-port';
import { machineDescription, PROJECT_ROOT, startServiceProcess } from '../test/support/service-process';
import { createTestDatabase } from '../test/support/test-database';
import { cpuBusyFraction } from './machine-load';
import { recordedApiRuns } from './recorded-figures';

// `npm run bench:api`: GET /v1/whoami under autocannon (50 connections) against a bare
// node:http server answering a fixed JSON body, on the same machine in the same run. In
// between, the same whoami without tRPC (bench/whoami-without-trpc.ts) separates what the
// API framework costs from what the service's own checks cost, and whoami is measured
// again with the access log the default configuration writes. Each server is one node
// process; besides throughput and latency, the CPU it spent per request is read from
// /proc (Linux), the figure that explains the others.
const CONNECTIONS = 50;
const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 10);
// Linux reports process CPU time in clock ticks of 1/100 s (USER_HZ).
const MS_PER_CLOCK_TICK = 10;
const GOAL = { throughputRatioAtLeast: 0.4, whoamiP99UnderMs: 25 };
// Past this share of the CPUs busy before the run, the machine is not quiet: other work
// competes with the server and the load generator for the two cores.
const QUIET_MACHINE_BUSY_FRACTION = 0.1;

const BARE_SERVER = `
const http = require('node:http');
const body = JSON.stringify({ org_id: '00000000-0000-0000-0000-000000000000', product: 'operator', scopes: [], service_account_id: 'abcdefghijkl', space_ids: [] });
http.createServer((req, res) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(body); }).listen(Number(process.argv[1]), '127.0.0.1');
`;

interface Figures {
  requestsPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  cpuMicrosPerRequest: number;
}

async function load(url: string, headers: Record<string, string>, serverPid: number): Promise<Figures> {
  // A short warm-up so JIT and connection pools are settled before measuring.
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers });
  const cpuBefore = processCpuMs(serverPid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_SECS, headers });
  const cpuMs = processCpuMs(serverPid) - cpuBefore;
  return {
    requestsPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    cpuMicrosPerRequest: Number(((cpuMs * 1000) / result.requests.total).toFixed(1)),
  };
}

/** User plus system CPU time the process has used so far, from /proc/<pid>/stat. */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * MS_PER_CLOCK_TICK;
}

async function mintKey(db: Db): Promise<string> {
  const { org_id: orgId } = await createOrganization(db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { key } = await createApiKey(db, { orgId, scopes: ['operator:devices:read'], spaceIds: [], env: 'test' });
  return key;
}

async function loadChildServer(args: string[], urlPath: string, headers: Record<string, string>): Promise<Figures> {
  const port = await freePort();
  const child = spawn(process.execPath, [...args, String(port)], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  try {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await fetch(`http://127.0.0.1:${port}/`);
        break;
      } catch (error) {
        if (attempt === 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return await load(`http://127.0.0.1:${port}${urlPath}`, headers, child.pid!);
  } finally {
    child.kill();
  }
}

/**
 * The service as `npm start` runs it, with the rate limit raised out of the way. The
 * access log (one line per request, at the default level `info`) is measured apart: it is
 * a cost of its own, which the bare server does not pay.
 */
async function measureService(accessLog: boolean): Promise<Figures> {
  const service = await startServiceProcess(
    { OPERATOR_RATE_LIMIT_PER_SEC: '1000000', OPERATOR_RATE_LIMIT_BURST: '1000000', OPERATOR_LOG_LEVEL: accessLog ? 'info' : 'warn' },
    { log: accessLog ? 'discard' : 'show' },
  );
  try {
    const database = connectDatabase(service.database.url, 2);
    const key = await mintKey(database.db).finally(() => database.close());
    return await load(`${service.url}/v1/whoami`, { Authorization: `Bearer ${key}` }, service.pid);
  } finally {
    await service.stop();
  }
}

async function measureWithoutTrpc(): Promise<Figures> {
  const testDatabase = await createTestDatabase();
  try {
    const database = connectDatabase(testDatabase.url, 2);
    const key = await applyMigrations(database)
      .then(() => mintKey(database.db))
      .finally(() => database.close());
    const script = path.join(PROJECT_ROOT, 'bench/whoami-without-trpc.ts');
    return await loadChildServer(['--import', 'tsx', script, testDatabase.url], '/v1/whoami', { Authorization: `Bearer ${key}` });
  } finally {
    await testDatabase.drop();
  }
}

async function main(): Promise<void> {
  const busyBefore = await cpuBusyFraction();
  const whoami = await measureService(false);
  const whoamiWithAccessLog = await measureService(true);
  const withoutTrpc = await measureWithoutTrpc();
  const baseline = await loadChildServer(['-e', BARE_SERVER], '/', {});

  const ratio = whoami.requestsPerSec / baseline.requestsPerSec;
  const met = ratio >= GOAL.throughputRatioAtLeast && whoami.p99 < GOAL.whoamiP99UnderMs && whoami.non2xx === 0;
  const report = {
    machine: machineDescription(),
    machineBusyBeforeRun: Number(busyBefore.toFixed(2)),
    connections: CONNECTIONS,
    durationSecs: DURATION_SECS,
    whoami,
    whoamiWithAccessLog,
    whoamiWithoutTrpc: withoutTrpc,
    bareNodeHttp: baseline,
    throughputRatio: Number(ratio.toFixed(3)),
    throughputRatioWithAccessLog: Number((whoamiWithAccessLog.requestsPerSec / baseline.requestsPerSec).toFixed(3)),
    throughputRatioWithoutTrpc: Number((withoutTrpc.requestsPerSec / baseline.requestsPerSec).toFixed(3)),
    goals: GOAL,
    met,
    recorded: recordedApiRuns(),
  };
  console.log(JSON.stringify(report, null, 2));
  for (const line of verdict(report, busyBefore)) console.log(line);
}

/** The run in plain words, beside the figures docs/performance.md records. */
function verdict(report: { whoami: Figures; bareNodeHttp: Figures; throughputRatio: number; met: boolean; recorded: ReturnType<typeof recordedApiRuns> }, busyBefore: number): string[] {
  const { whoami, bareNodeHttp, throughputRatio, recorded } = report;
  const lines = [
    report.met
      ? `Goal met: whoami at ${throughputRatio.toFixed(2)} of bare node:http (goal >= ${GOAL.throughputRatioAtLeast}), p99 ${whoami.p99} ms (goal < ${GOAL.whoamiP99UnderMs} ms).`
      : `GOAL NOT MET: whoami at ${throughputRatio.toFixed(2)} of bare node:http (goal >= ${GOAL.throughputRatioAtLeast}), p99 ${whoami.p99} ms (goal < ${GOAL.whoamiP99UnderMs} ms), ${whoami.non2xx} non-2xx.`,
  ];
  if (recorded.length > 0) {
    const range = (values: number[]) => `${Math.min(...values)}-${Math.max(...values)}`;
    lines.push(
      `Recorded in docs/performance.md: ratio ${range(recorded.map((run) => run.throughputRatio))}, CPU/request ${range(recorded.map((run) => run.cpuMicrosPerRequest))} µs (bare ${range(recorded.map((run) => run.bareCpuMicrosPerRequest))} µs); this run: ratio ${throughputRatio.toFixed(2)}, CPU/request ${whoami.cpuMicrosPerRequest} µs (bare ${bareNodeHttp.cpuMicrosPerRequest} µs).`,
    );
    // The bare server is the yardstick of the machine: if it costs more too, the machine
    // differs; if only the service does, the service has regressed.
    const serviceGrowth = whoami.cpuMicrosPerRequest / Math.max(...recorded.map((run) => run.cpuMicrosPerRequest));
    const bareGrowth = bareNodeHttp.cpuMicrosPerRequest / Math.max(...recorded.map((run) => run.bareCpuMicrosPerRequest));
    if (serviceGrowth > 1.25) {
      lines.push(
        bareGrowth > 1.25
          ? `The bare server costs ${bareGrowth.toFixed(1)}x its recorded CPU too: this machine (or its load) differs from the recorded one; compare ratios, not absolute figures.`
          : `The service costs ${serviceGrowth.toFixed(1)}x its recorded CPU per request while the bare server does not: the service has regressed.`,
      );
    }
  }
  if (busyBefore > QUIET_MACHINE_BUSY_FRACTION) {
    lines.push(`The machine was ${Math.round(busyBefore * 100)} % busy before the run: other processes shared the CPUs, so these figures are not comparable with the recorded ones. Re-run on a quiet machine.`);
  }
  return lines;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
