import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPageServer, type PageServer } from '../support/browser-fixtures';
import { parsePublicId } from '../../server/domain/ids';
import { apiClient, type ApiCall } from '../support/http';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { isRunning } from '../../server/os/processes';

// The service's own device moves on local Chromium: a killed browser, idle suspend,
// the task slot, and a restart. Sweeps run every 200 ms so the workers act quickly.
let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let pages: PageServer;

beforeAll(async () => {
  pages = await startPageServer();
  test = await startTestService({ CHROMIUM_PATH: '/usr/bin/chromium', OPERATOR_SWEEP_INTERVAL_MS: '200' });
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:devices:read', 'operator:devices:write']));
});
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

const sql = () => test.service.services.sql;
const pool = () => test.service.services.browserPool;
const uuidOf = (id: string) => parsePublicId('device', id)!;

async function createDevice(): Promise<string> {
  const created = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function waitForStatus(id: string, status: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if ((await api('GET', `/v1/devices/${id}`)).body.status === status) return Date.now() - started;
    await sleep(100);
  }
  throw new Error(`device ${id} did not reach ${status} within ${timeoutMs} ms`);
}

/** Stands in for the tasks module holding the device's slot. */
async function holdSlot(id: string, taskId: string | null): Promise<void> {
  await sql()`update devices set current_task_id = ${taskId} where id = ${uuidOf(id)}`;
}

describe('a browser that dies', () => {
  it('puts the device in error within 10 s of a kill -9, clears its slot, and wake recovers it', async () => {
    const id = await createDevice();
    await holdSlot(id, randomUUID());
    const pid = pool().get(uuidOf(id))!.pid!;
    process.kill(pid, 'SIGKILL');
    expect(await waitForStatus(id, 'error', 10_000)).toBeLessThan(10_000);
    const errored = await api('GET', `/v1/devices/${id}`);
    expect(errored.body.current_task_id).toBeNull();
    const events = await sql()`select type from events where envelope->'data'->'object'->>'id' = ${id} order by created_at`;
    expect(events.map((row) => row.type)).toContain('operator.device.errored.v1');
    const [open] = await sql()`select count(*)::int as n from device_active_periods where device_id = ${uuidOf(id)} and ended_at is null`;
    expect(open!.n).toBe(0);

    const woke = await api('POST', `/v1/devices/${id}/wake`);
    expect(woke.status).toBe(202);
    expect(woke.body.status).toBe('active');
    const page = await pool().get(uuidOf(id))!.page();
    await page.navigate(pages.url('/next'));
    expect(await page.textOf('#where')).toBe('Second page');
    await api('DELETE', `/v1/devices/${id}`);
  });
});

describe('the task slot', () => {
  it('moves a create abandoned by a host that never came back to error after 5 minutes, and wake recovers it', async () => {
    const abandoned = await createDevice();
    const recent = await createDevice();
    for (const id of [abandoned, recent]) await pool().close(uuidOf(id));
    // As a host that died mid-create leaves them: `creating`, on its own host id.
    await sql()`update devices set status = 'creating', host_id = 'gone-host', status_changed_at = now() - interval '6 minutes' where id = ${uuidOf(abandoned)}`;
    await sql()`update devices set status = 'creating', host_id = 'gone-host', status_changed_at = now() - interval '1 minute' where id = ${uuidOf(recent)}`;
    await waitForStatus(abandoned, 'error', 5_000);
    await sleep(500);
    expect((await api('GET', `/v1/devices/${recent}`)).body.status).toBe('creating');
    const woke = await api('POST', `/v1/devices/${abandoned}/wake`);
    expect({ status: woke.status, device: woke.body.status }).toEqual({ status: 202, device: 'active' });
    for (const id of [abandoned, recent]) expect((await api('DELETE', `/v1/devices/${id}`)).status).toBe(202);
  });

  it('refuses to put a busy device to sleep (409 device_busy); delete clears the slot', async () => {
    const id = await createDevice();
    const taskId = randomUUID();
    await holdSlot(id, taskId);
    expect((await api('GET', `/v1/devices/${id}`)).body.current_task_id).toBe(`task_${taskId}`);
    const busy = await api('POST', `/v1/devices/${id}/sleep`);
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('device_busy');
    const deleted = await api('DELETE', `/v1/devices/${id}`);
    expect(deleted.status).toBe(202);
    expect(deleted.body).toMatchObject({ status: 'terminated', current_task_id: null });
  });
});

describe('idle suspend', () => {
  it('puts an idle device to sleep after idle_suspend_secs, but not one holding a task', async () => {
    const idle = await createDevice();
    const busy = await createDevice();
    await holdSlot(busy, randomUUID());
    await sql()`update devices set last_active_at = now() - interval '901 seconds' where id in ${sql()([uuidOf(idle), uuidOf(busy)])}`;
    await waitForStatus(idle, 'sleeping', 5_000);
    expect(pool().get(uuidOf(idle))).toBeUndefined();
    const [audit] = await sql()`select actor, details from audit_events where resource_id = ${idle} and action = 'operator.device.slept'`;
    expect(audit).toMatchObject({ actor: 'system', details: { reason: 'idle' } });
    await sleep(600);
    expect((await api('GET', `/v1/devices/${busy}`)).body.status).toBe('active');

    // A device active recently is left alone.
    await holdSlot(busy, null);
    await sql()`update devices set last_active_at = now() where id = ${uuidOf(busy)}`;
    await sleep(600);
    expect((await api('GET', `/v1/devices/${busy}`)).body.status).toBe('active');
    await api('DELETE', `/v1/devices/${idle}`);
    await api('DELETE', `/v1/devices/${busy}`);
  });
});

describe('a restart', () => {
  it('puts every device back where it was, active ones on a live browser, metering without overlap', async () => {
    const active = await createDevice();
    const page = await pool().get(uuidOf(active))!.page();
    await page.navigate(pages.url('/set-cookie'));
    const oldPid = pool().get(uuidOf(active))!.pid!;
    const asleep = await createDevice();
    await api('POST', `/v1/devices/${asleep}/sleep`);
    const gone = await createDevice();
    await api('DELETE', `/v1/devices/${gone}`);
    await sleep(500);

    // A stop that closes the browsers (Ctrl-C): each active device is relaunched on its profile.
    await test.restart('shutdown');
    expect(await isRunning(oldPid)).toBe(false);
    const statuses = await Promise.all([active, asleep, gone].map(async (id) => (await api('GET', `/v1/devices/${id}`)).body.status));
    expect(statuses).toEqual(['active', 'sleeping', 'terminated']);
    expect(pool().get(uuidOf(asleep))).toBeUndefined();
    const relaunched = pool().get(uuidOf(active))!;
    expect(relaunched.pid).not.toBe(oldPid);
    const pageAgain = await relaunched.page();
    await pageAgain.navigate(pages.url('/show-cookie'));
    expect(await pageAgain.textOf('#cookie')).toContain('device_session=kept');

    const periods = await sql()<{ started: number; ended: number | null }[]>`
      select extract(epoch from started_at)::float8 as started, extract(epoch from ended_at)::float8 as ended
      from device_active_periods where device_id = ${uuidOf(active)} order by started_at`;
    expect(periods).toHaveLength(2);
    expect(periods[0]!.ended).not.toBeNull();
    expect(periods[0]!.ended!).toBeLessThanOrEqual(periods[1]!.started);
    expect(periods[1]!.ended).toBeNull();
    await api('DELETE', `/v1/devices/${active}`);
    await api('DELETE', `/v1/devices/${asleep}`);
  });
});
