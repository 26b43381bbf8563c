import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { emitEvent } from '../../server/domain/events/emit-event';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import { verifyWebhook } from '../../server/domain/webhooks/verify-webhook';
import type { RunningService } from '../../server/assembly/start-service';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { apiClient } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startServiceOn } from '../support/test-service';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/** Beside the defaults of both kinds of start (host-process.ts, test-service.ts). */
const ENV = {
  OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
  OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '50',
  // The lease is the timeout plus 5 s: a dead instance's attempt is retried within ~6.5 s.
  OPERATOR_WEBHOOK_TIMEOUT_MS: '1500',
};

let database: TestDatabase;
let client: Database;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await client?.close();
  await database?.drop();
});

/** A data directory of its own for each server, removed after the file's tests. */
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'operator-webhooks-crash-'));
  cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The real server as its own process (as `npm start` runs it), so it can be killed outright. */
async function startServerProcess(): Promise<HostProcess> {
  const server = await startHostProcess({ databaseUrl: database.url, dataDir: await dataDir(), port: await freePort(), env: ENV });
  cleanups.push(() => server.stop('SIGKILL'));
  return server;
}

async function startInProcess(): Promise<RunningService> {
  const service = await startServiceOn(database.url, await dataDir(), ENV);
  cleanups.push(() => service.close());
  return service;
}

async function receiver(answer?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(answer);
  cleanups.push(() => started.close());
  return started;
}

async function tenantWithEndpoint(baseUrl: string, url: string) {
  client ??= connectDatabase(database.url, 2);
  const { org_id: orgId } = await createOrganization(client.db, { name: 'crash', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { space_id: spaceId } = await createSpace(client.db, orgId, 'default');
  const { key } = await createApiKey(client.db, { orgId, scopes: ['operator:webhooks:write'], spaceIds: [], env: 'test' });
  const created = await apiClient(baseUrl, key)('POST', '/v1/webhook_endpoints', { url });
  expect(created.status).toBe(201);
  const emit = (type: 'operator.device.created.v1' = 'operator.device.created.v1') =>
    client.db.transaction((tx) => emitEvent(tx, { orgId, spaceId, type, resource: { object: 'device', id: `dev_${crypto.randomUUID()}` } }));
  return { secret: created.body.secret as string, emit };
}

describe('crash safety', () => {
  it('redelivers after a server killed mid-delivery is replaced', { timeout: 60_000 }, async () => {
    const server = await startServerProcess();
    let killed: Promise<unknown> | null = null;
    const target = await receiver((res, index) => {
      if (index === 0) {
        // Holding the request open and killing the sender: no outcome is ever recorded.
        killed = server.stop('SIGKILL');
        return;
      }
      res.writeHead(200).end();
    });
    const { secret, emit } = await tenantWithEndpoint(server.url, target.url);
    await emit();
    await target.waitFor(1);
    await killed;

    const replacement = await startInProcess();
    const [first, second] = await target.waitFor(2, 20_000);
    expect(verifyWebhook(second!.rawBody, second!.headers['x-service-signature'] as string, secret).id).toBe(
      verifyWebhook(first!.rawBody, first!.headers['x-service-signature'] as string, secret).id,
    );
    await replacement.close();
  });

  it('never sends the same attempt twice at once when two instances share the database', { timeout: 60_000 }, async () => {
    const one = await startInProcess();
    await startInProcess();
    const target = await receiver();
    const { secret, emit } = await tenantWithEndpoint(one.url, target.url);
    const count = 200;
    await Promise.all(Array.from({ length: count }, () => emit()));
    await target.waitFor(count, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const ids = target.received.map((d) => verifyWebhook(d.rawBody, d.headers['x-service-signature'] as string, secret).id);
    expect(ids).toHaveLength(count);
    expect(new Set(ids).size).toBe(count);
  });
});
