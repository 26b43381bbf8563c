import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parsePublicId } from '../../server/domain/ids';
import type { RunningService } from '../../server/assembly/start-service';
import { apiClient } from '../support/http';
import { allScopes, createTenant, startAnotherInstance, startTestService, type TestService } from '../support/test-service';

// Two instances on one database, each with its own data directory (host): a live-view
// client that reaches the instance without the device's browser is relayed to the one
// that has it, and a device deleted or slept through one instance loses its browser on
// the other.

let first: TestService;
let second: RunningService;

beforeAll(async () => {
  // Sweeps every 200 ms, so an instance notices quickly what another one changed.
  first = await startTestService({ OPERATOR_SWEEP_INTERVAL_MS: '200' });
  second = await startAnotherInstance(first);
});
afterAll(async () => {
  await second?.close();
  await first?.stop();
});

function connect(url: string, protocols: string[]): Promise<{ socket: WebSocket; messages: any[]; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols);
    const messages: any[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    const closed = new Promise<number>((done) => socket.on('close', (code) => done(code)));
    socket.on('unexpected-response', (_request, response) => reject(Object.assign(new Error('refused'), { status: response.statusCode })));
    socket.on('error', reject);
    socket.on('open', () => resolve({ socket, messages, closed }));
  });
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a session whose device runs on another instance', () => {
  it('is relayed to that instance: frames arrive, refusals and revocation come through', async () => {
    const tenant = await createTenant(first);
    const key = await tenant.key(allScopes);
    // The device is created through the second instance, so its browser runs there.
    const onSecond = apiClient(second.url, key);
    const device = await onSecond('POST', '/v1/devices', { space_id: tenant.spaceId });
    expect(device.status).toBe(201);
    const session = (await onSecond('POST', `/v1/devices/${device.body.id}/sessions`, {})).body;
    const path = new URL(session.ws_url).pathname;
    const protocols = ['svc.operator.v1', `svc.token.${session.session_token}`];

    const relayed = await connect(`${first.url.replace('http', 'ws')}${path}`, protocols);
    await until(() => relayed.messages.some((message) => message.type === 'frame'));
    expect(relayed.messages[0]).toMatchObject({ type: 'ready', session_id: session.id, device_id: device.body.id });
    relayed.socket.send(JSON.stringify({ type: 'input', input: { kind: 'text', text: 'x' } }));
    await until(() => relayed.messages.some((message) => message.type === 'error' && message.code === 'input_not_allowed'));

    const wrongToken = await connect(`${first.url.replace('http', 'ws')}${path}`, ['svc.operator.v1', `svc.token.sestok_${'A'.repeat(43)}`]).catch((error) => error);
    expect(wrongToken.status).toBe(401);

    expect((await apiClient(first.url, key)('DELETE', `/v1/sessions/${session.id}`)).status).toBe(204);
    expect(await relayed.closed).toBe(4410);
    expect((await onSecond('DELETE', `/v1/devices/${device.body.id}`)).status).toBe(202);
  });

  it('closes the browser on its own instance when the device is slept or deleted through another', async () => {
    const tenant = await createTenant(first);
    const key = await tenant.key(allScopes);
    const device = await apiClient(second.url, key)('POST', '/v1/devices', { space_id: tenant.spaceId });
    const id = parsePublicId('device', device.body.id)!;
    const profile = path.join(second.services.config.dataDir, 'profiles', id);
    expect(second.services.browserPool.get(id)).toBeDefined();
    expect(existsSync(profile)).toBe(true);

    expect((await apiClient(first.url, key)('POST', `/v1/devices/${device.body.id}/sleep`)).body.status).toBe('sleeping');
    await until(() => second.services.browserPool.get(id) === undefined);
    expect(existsSync(profile)).toBe(true);

    const woke = await apiClient(second.url, key)('POST', `/v1/devices/${device.body.id}/wake`);
    expect(woke.body.status).toBe('active');
    expect((await apiClient(first.url, key)('DELETE', `/v1/devices/${device.body.id}`)).status).toBe(202);
    await until(() => second.services.browserPool.get(id) === undefined && !existsSync(profile));
  });
});
