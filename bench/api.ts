import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { connectDatabase } from '../db/client';
import { createApiKey, createOrganization } from '../server/domain/orgs/operator-admin';
import { freePort, machineDescription, startServiceProcess } from '../test/support/service-process';

// `npm run bench:api`: GET /v1/whoami under autocannon (50 connections) against a bare
// node:http server answering a fixed JSON body, on the same machine in the same run.
const CONNECTIONS = 50;
const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 10);

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
}

async function load(url: string, headers: Record<string, string>): Promise<Figures> {
  // A short warm-up so JIT and connection pools are settled before measuring.
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_SECS, headers });
  return { requestsPerSec: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx };
}

async function main(): Promise<void> {
  const service = await startServiceProcess({ OPERATOR_RATE_LIMIT_PER_SEC: '1000000', OPERATOR_RATE_LIMIT_BURST: '1000000' });
  const database = connectDatabase(service.database.url, 2);
  const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { key } = await createApiKey(database.db, { orgId, scopes: ['operator:devices:read'], spaceIds: [], env: 'test' });
  await database.close();

  const whoami = await load(`${service.url}/v1/whoami`, { Authorization: `Bearer ${key}` });
  await service.stop();

  const barePort = await freePort();
  const bare = spawn(process.execPath, ['-e', BARE_SERVER, String(barePort)], { stdio: 'inherit' });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const baseline = await load(`http://127.0.0.1:${barePort}/`, {});
  bare.kill();

  const ratio = whoami.requestsPerSec / baseline.requestsPerSec;
  const report = {
    machine: machineDescription(),
    connections: CONNECTIONS,
    durationSecs: DURATION_SECS,
    whoami,
    bareNodeHttp: baseline,
    throughputRatio: Number(ratio.toFixed(3)),
    goals: { throughputRatioAtLeast: 0.4, whoamiP99UnderMs: 25 },
    met: ratio >= 0.4 && whoami.p99 < 25 && whoami.non2xx === 0,
  };
  console.log(JSON.stringify(report, null, 2));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
