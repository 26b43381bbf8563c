import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { apiKeys, auditEvents, events } from '../../db/schema';
import { revokeApiKey } from '../../server/domain/orgs/operator-admin';
import type { RunningService } from '../../server/assembly/start-service';
import { apiClient } from '../support/http';
import { PROJECT_ROOT } from '../support/service-process';
import { waitForTaskEnd } from '../support/task-helpers';
import { allScopes, createTenant, startAnotherInstance, startTestService, type TestService, type TestTenant } from '../support/test-service';

// Revoking an API key reaches what it holds open, on every instance sharing the database,
// within a second: its task event streams end, and the live-view sockets of the sessions
// it minted close (those sessions are revoked with it). Two real instances, PostgreSQL
// and Chromium, each running the browser of one device.

const run = promisify(execFile);
let first: TestService;
let second: RunningService;
let tenant: TestTenant;

beforeAll(async () => {
  first = await startTestService();
  second = await startAnotherInstance(first);
  tenant = await createTenant(first);
});
afterAll(async () => {
  await second?.close();
  await first?.stop();
});

/** An open event stream; `ended` resolves with the time its body ended. */
async function openStream(baseUrl: string, key: string, taskId: string): Promise<{ ended: Promise<number> }> {
  const response = await fetch(`${baseUrl}/v1/tasks/${taskId}/events`, { headers: { Authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const ended = (async () => {
    for (;;) {
      const read = await reader.read().catch(() => ({ done: true }));
      if (read.done) return Date.now();
    }
  })();
  return { ended };
}

/** An open live-view socket; `closed` resolves with its close code and the time it closed. */
function openSocket(baseUrl: string, session: { ws_url: string; session_token: string }): Promise<{ socket: WebSocket; closed: Promise<{ code: number; at: number }> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${baseUrl.replace('http', 'ws')}${new URL(session.ws_url).pathname}`, ['svc.operator.v1', `svc.token.${session.session_token}`]);
    const closed = new Promise<{ code: number; at: number }>((done) => socket.on('close', (code) => done({ code, at: Date.now() })));
    socket.on('unexpected-response', (_request, response) => reject(Object.assign(new Error('refused'), { status: response.statusCode })));
    socket.on('error', reject);
    // Opened once the gateway said ready: the socket is registered on the instance.
    socket.once('message', () => resolve({ socket, closed }));
  });
}

async function handshakeStatus(baseUrl: string, session: { ws_url: string; session_token: string }): Promise<number> {
  return openSocket(baseUrl, session).then(
    ({ socket }) => {
      socket.close();
      return 101;
    },
    (error: { status: number }) => error.status,
  );
}

describe('revoking an API key', () => {
  it('within 1 s ends the event streams it opened and closes the sockets of the sessions it minted, on both instances', async () => {
    const key = await tenant.key(allScopes);
    const keyId = key.split('_')[3]!;
    const otherKey = await tenant.key(allScopes);
    const onFirst = apiClient(first.url, key);
    const device = (await onFirst('POST', '/v1/devices', { space_id: tenant.spaceId })).body.id;
    // A task parked on a question keeps its streams open (no escalation URL: nothing is sent).
    const task = (await onFirst('POST', `/v1/devices/${device}/tasks`, { prompt: 'ask a human "Anyone?"' })).body.id;
    await waitForTaskEnd(onFirst, task, 20_000, ['needs_human']);

    const streams = [await openStream(first.url, key, task), await openStream(second.url, key, task)];
    const otherStream = await openStream(second.url, otherKey, task);
    const session = (await onFirst('POST', `/v1/devices/${device}/sessions`, { mode: 'control' })).body;
    const otherSession = (await apiClient(first.url, otherKey)('POST', `/v1/devices/${device}/sessions`, {})).body;
    // A second device whose browser runs on the second instance, so each gateway closes sockets of its own.
    const onSecond = apiClient(second.url, key);
    const secondDevice = (await onSecond('POST', '/v1/devices', { space_id: tenant.spaceId })).body.id;
    const secondSession = (await onSecond('POST', `/v1/devices/${secondDevice}/sessions`, {})).body;
    // On the first device's instance, relayed to it through the second, and on the second device's.
    const sockets = [await openSocket(first.url, session), await openSocket(second.url, session), await openSocket(second.url, secondSession)];
    const otherSocket = await openSocket(second.url, otherSession);

    // Timed from the revocation's commit, which the test's own connection sees within a
    // poll; the key's revoked_at is its transaction's start, before the CLI's statements
    // (each session's revocation, its event and audit entry), which a loaded host stretches.
    const db = first.service.services.db;
    const committed = (async () => {
      for (const giveUpAt = Date.now() + 60_000; Date.now() < giveUpAt; ) {
        const [row] = await db.select({ revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.keyId, keyId));
        if (row?.revokedAt != null) return Date.now();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error('the revocation was never committed');
    })();
    committed.catch(() => undefined); // read below, once the CLI answered
    // Revoked as operators do, from another process: `npm run admin -- key:revoke`.
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'server/cli/admin.ts'), 'key:revoke', '--key-id', keyId], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, DATABASE_URL: first.database.url, OPERATOR_LOG_LEVEL: 'silent' },
    });
    expect(JSON.parse(stdout)).toEqual({ revoked: true });
    const revokedAt = await committed;

    for (const { ended } of streams) expect((await ended) - revokedAt).toBeLessThan(1_000);
    for (const { closed } of sockets) {
      const { code, at } = await closed;
      expect({ code, withinOneSecond: at - revokedAt < 1_000 }).toEqual({ code: 4410, withinOneSecond: true });
    }

    // What the key opened stays shut: its session is revoked, and the key is refused at
    // once on both instances that had it cached (the notice cleared the authenticator's cache).
    expect(await handshakeStatus(second.url, session)).toBe(410);
    expect((await onFirst('GET', `/v1/tasks/${task}`)).status).toBe(401);
    expect((await onSecond('GET', `/v1/tasks/${task}`)).status).toBe(401);
    const otherCall = apiClient(first.url, otherKey);
    expect((await otherCall('GET', `/v1/sessions/${session.id}`)).body.revoked_at).not.toBeNull();
    const revokedEvents = await db.select().from(events).where(eq(events.type, 'operator.session.revoked.v1'));
    expect(revokedEvents.map((event) => (event.envelope as any).data.object.id).sort()).toEqual([session.id, secondSession.id].sort());
    const [audit] = await db.select().from(auditEvents).where(and(eq(auditEvents.action, 'operator.session.revoked'), eq(auditEvents.resourceId, session.id)));
    expect(audit).toMatchObject({ actor: 'system', details: { why: 'api_key_revoked', key_id: keyId } });

    // Another key's stream and socket are untouched.
    const stillOpen = await Promise.race([otherStream.ended.then(() => 'ended'), otherSocket.closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('open'), 500))]);
    expect(stillOpen).toBe('open');
    otherSocket.socket.close();
    expect((await otherCall('DELETE', `/v1/devices/${device}`)).status).toBe(202);
    expect((await otherCall('DELETE', `/v1/devices/${secondDevice}`)).status).toBe(202);
    await otherStream.ended;
  });

  it('refuses the key at once on every instance, without waiting for the 500 ms key cache to expire', async () => {
    const key = await tenant.key(['operator:devices:read']);
    const keyId = key.split('_')[3]!;
    const onFirst = apiClient(first.url, key);
    const onSecond = apiClient(second.url, key);
    // Both instances have just verified the key: it sits in their caches for 500 ms.
    expect((await onFirst('GET', '/v1/whoami')).status).toBe(200);
    expect((await onSecond('GET', '/v1/whoami')).status).toBe(200);
    await revokeApiKey(first.service.services.db, keyId, { publicUrl: first.url });
    const poll = { timeout: 250, interval: 20 };
    await expect.poll(async () => (await onFirst('GET', '/v1/whoami')).status, poll).toBe(401);
    await expect.poll(async () => (await onSecond('GET', '/v1/whoami')).status, poll).toBe(401);
  });
});
