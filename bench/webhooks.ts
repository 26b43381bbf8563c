import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { connectDatabase } from '../db/client';
import { emitEvent, OUTBOX_CHANNEL } from '../server/domain/events/emit-event';
import { createApiKey, createOrganization, createSpace } from '../server/domain/orgs/operator-admin';
import { verifyWebhook } from '../server/domain/webhooks/verify-webhook';
import { apiClient } from '../test/support/http';
import { machineDescription, percentile, startServiceProcess } from '../test/support/service-process';

// `npm run bench:webhooks`: the service runs as its own process (as `npm start` runs it);
// this process commits state changes (an event through emitEvent in its own transaction,
// the way the domain does) and runs the receiver, which verifies every signature.
//  1. Throughput: a backlog of events written at once; deliveries/s from writing it to the
//     last receipt.
//  2. Latency: one event per transaction at a steady rate; state change (commit) to receipt.
const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 5_000);
const PACED_RATE_PER_SEC = Number(process.env.BENCH_WEBHOOK_RATE ?? 50);
const PACED_SECS = Number(process.env.BENCH_WEBHOOK_PACED_SECS ?? 10);

interface Receipt {
  seq: number;
  at: number;
}

async function main(): Promise<void> {
  const service = await startServiceProcess({ OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true' });
  const database = connectDatabase(service.database.url, 4);

  const receipts: Receipt[] = [];
  let secret = '';
  let badSignatures = 0;
  let onReceipt: () => void = () => {};
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(200).end();
      try {
        const envelope = verifyWebhook(Buffer.concat(chunks), req.headers['x-service-signature'] as string, secret);
        receipts.push({ seq: (envelope.data.object as { bench_seq: number }).bench_seq, at });
      } catch {
        badSignatures += 1;
      }
      onReceipt();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { space_id: spaceId } = await createSpace(database.db, orgId, 'bench');
  const { key } = await createApiKey(database.db, { orgId, scopes: ['operator:webhooks:write'], spaceIds: [], env: 'test' });
  const created = await apiClient(service.url, key)('POST', '/v1/webhook_endpoints', { url: receiverUrl });
  if (created.status !== 201) throw new Error(`could not create the endpoint: ${created.status}`);
  secret = created.body.secret;
  const endpointId = (created.body.id as string).slice('whe_'.length);

  const committedAt = new Map<number, number>();
  let nextSeq = 0;
  /** One transaction (one state change, or a batch of them) emitting `count` events. */
  async function commit(count = 1): Promise<void> {
    const seqs = Array.from({ length: count }, () => nextSeq++);
    await database.db.transaction(async (tx) => {
      for (const seq of seqs) {
        await emitEvent(tx, { orgId, spaceId, type: 'operator.task.succeeded.v1', resource: { object: 'task', id: `task_${crypto.randomUUID()}`, bench_seq: seq } });
      }
    });
    const at = performance.now();
    for (const seq of seqs) committedAt.set(seq, at);
  }
  function untilReceived(count: number): Promise<void> {
    return new Promise((resolve) => {
      onReceipt = () => {
        if (receipts.length >= count) resolve();
      };
      onReceipt();
    });
  }

  // Warm-up: JIT, pools, the first connections.
  await Promise.all(Array.from({ length: 100 }, () => commit()));
  await untilReceived(100);

  // Throughput of the delivery pipeline itself: a backlog of BURST events and their
  // deliveries is written in one statement (shaped as emitEvent writes them), so how fast
  // this loaded machine commits single events does not cap what is measured.
  const burstStart = performance.now();
  const burstFirstSeq = nextSeq;
  nextSeq += BURST;
  await database.db.transaction(async (tx) => {
    await tx.execute(sql`
      with event as (
        insert into events (org_id, space_id, type, envelope)
        select ${orgId}, ${spaceId}, 'operator.task.succeeded.v1', jsonb_build_object(
          'id', 'evt_' || gen_random_uuid(), 'object', 'event', 'type', 'operator.task.succeeded.v1',
          'created_at', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'api_version', '0.1.0',
          'org_id', ${orgId}::text, 'space_id', ${spaceId}::text,
          'data', jsonb_build_object('object', jsonb_build_object('object', 'task', 'bench_seq', ${burstFirstSeq}::int + seq)))
        from generate_series(0, ${BURST - 1}::int) as seq
        returning id
      )
      insert into webhook_deliveries (event_id, endpoint_id, org_id) select id, ${endpointId}, ${orgId} from event`);
    await tx.execute(sql`select pg_notify(${OUTBOX_CHANNEL}, '')`);
  });
  const burstCommitted = performance.now();
  await untilReceived(100 + BURST);
  const burstEnd = performance.now();

  const pacedFirstSeq = nextSeq;
  const pacedCount = PACED_RATE_PER_SEC * PACED_SECS;
  const pacedStart = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < pacedCount; i += 1) {
    const due = pacedStart + (i * 1000) / PACED_RATE_PER_SEC;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(commit());
  }
  await Promise.all(pending);
  await untilReceived(100 + BURST + pacedCount);
  const paced = receipts
    .filter((r) => r.seq >= pacedFirstSeq)
    .map((r) => r.at - committedAt.get(r.seq)!)
    .sort((a, b) => a - b);

  const uniqueSeqs = new Set(receipts.map((r) => r.seq)).size;
  const deliveriesPerSec = BURST / ((burstEnd - burstStart) / 1000);
  const round = (value: number) => Math.round(value * 10) / 10;
  const report = {
    machine: machineDescription(),
    burst: {
      events: BURST,
      backlogWrittenMs: Math.round(burstCommitted - burstStart),
      deliveriesPerSec: Math.round(deliveriesPerSec),
    },
    paced: {
      ratePerSec: PACED_RATE_PER_SEC,
      events: pacedCount,
      latencyMs: { p50: round(percentile(paced, 50)), p99: round(percentile(paced, 99)), max: round(paced.at(-1) ?? NaN) },
    },
    received: receipts.length,
    duplicates: receipts.length - uniqueSeqs,
    badSignatures,
    goals: { deliveriesPerSecAtLeast: 500, pacedP50UnderMs: 100 },
    met: deliveriesPerSec >= 500 && percentile(paced, 50) < 100 && badSignatures === 0,
  };
  console.log(JSON.stringify(report, null, 2));

  await database.close();
  await service.stop();
  await new Promise<void>((resolve) => {
    receiver.closeAllConnections();
    receiver.close(() => resolve());
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
