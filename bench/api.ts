import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { connectDatabase, type Db } from '../db/client';
import { applyMigrations } from '../db/migrate';
import { createApiKey, createOrganization } from '../server/domain/orgs/operator-admin';
import { freePort, machineDescription, PROJECT_ROOT, startServiceProcess } from '../test/support/service-process';
import { createTestDatabase } from '../test/support/test-database';

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
  const whoami = await measureService(false);
  const whoamiWithAccessLog = await measureService(true);
  const withoutTrpc = await measureWithoutTrpc();
  const baseline = await loadChildServer(['-e', BARE_SERVER], '/', {});

  const ratio = whoami.requestsPerSec / baseline.requestsPerSec;
  const report = {
    machine: machineDescription(),
    connections: CONNECTIONS,
    durationSecs: DURATION_SECS,
    whoami,
    whoamiWithAccessLog,
    whoamiWithoutTrpc: withoutTrpc,
    bareNodeHttp: baseline,
    throughputRatio: Number(ratio.toFixed(3)),
    throughputRatioWithAccessLog: Number((whoamiWithAccessLog.requestsPerSec / baseline.requestsPerSec).toFixed(3)),
    throughputRatioWithoutTrpc: Number((withoutTrpc.requestsPerSec / baseline.requestsPerSec).toFixed(3)),
    goals: { throughputRatioAtLeast: 0.4, whoamiP99UnderMs: 25 },
    met: ratio >= 0.4 && whoami.p99 < 25 && whoami.non2xx === 0,
  };
  console.log(JSON.stringify(report, null, 2));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
