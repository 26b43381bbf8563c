import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, organizations } from '../../db/schema';
import { createOperator } from '../../server/domain/console/operator-accounts';
import { consoleClient, consoleFailure } from '../support/console-client';
import { apiClient } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { allScopes, createTenant, startTestService, type TestService } from '../support/test-service';

// The console API behind the console's pages: the organizations list searched and paged
// with 1,000 organizations, the escalation inbox filtered by organization, an
// organization's devices (sleep, wake, delete as /v1 does them), settings, tasks, usage
// and audit log, and a task's page; every change audited with the operator's name, and
// nothing answered to a caller who is not signed in or lacks the console header.

let test: TestService;
let pages: TaskPages;
let consoleKey: string;

beforeAll(async () => {
  pages = await startTaskPages();
  test = await startTestService();
  consoleKey = (await createOperator(test.service.services.db, 'Ada')).console_key;
});
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

async function signedIn() {
  const { client } = consoleClient(test.url);
  await client.signIn.mutate({ console_key: consoleKey });
  return client;
}

const ORG = '00000000-0000-4000-8000-000000000000';

describe('console pages API: who may call', () => {
  it('refuses every page call when signed out (401) or without the console header (403)', async () => {
    const { client } = consoleClient(test.url);
    const calls: [string, () => Promise<unknown>][] = [
      ['organizations', () => client.organizations.query({ query: '' })],
      ['organization', () => client.organization.query({ org_id: ORG })],
      ['updateOrganization', () => client.updateOrganization.mutate({ org_id: ORG, max_devices: 1, max_device_seconds: null, escalation_url: null })],
      ['organizationUsage', () => client.organizationUsage.query({ org_id: ORG })],
      ['listAuditEvents', () => client.listAuditEvents.query({}, { context: { orgId: ORG } })],
      ['organizationDevices', () => client.organizationDevices.query({ org_id: ORG })],
      ['sleepDevice', () => client.sleepDevice.mutate({ id: 'dev_x' }, { context: { orgId: ORG } })],
      ['wakeDevice', () => client.wakeDevice.mutate({ id: 'dev_x' }, { context: { orgId: ORG } })],
      ['deleteDevice', () => client.deleteDevice.mutate({ id: 'dev_x' }, { context: { orgId: ORG } })],
      ['recentTasks', () => client.recentTasks.query({ org_id: ORG })],
      ['task', () => client.task.query({ task_id: 'task_x' })],
      ['pendingEscalations', () => client.pendingEscalations.query({ org_id: ORG })],
      ['waitingOrganizations', () => client.waitingOrganizations.query()],
    ];
    for (const [name, call] of calls) {
      expect(await consoleFailure(call()), name).toEqual({ status: 401, code: 'console_sign_in_required', message: 'Sign in with your console key.' });
    }
    // The CSRF rule: a signed-in browser's cookie alone is not enough.
    const { client: signed, jar } = consoleClient(test.url);
    await signed.signIn.mutate({ console_key: consoleKey });
    for (const path of ['organizations?input=%7B%7D', 'waitingOrganizations', 'sleepDevice']) {
      const post = path === 'sleepDevice';
      const response = await fetch(`${test.url}/console/api/${path}`, {
        method: post ? 'POST' : 'GET',
        headers: { cookie: jar.cookie, ...(post ? { 'content-type': 'application/json' } : {}) },
        ...(post ? { body: JSON.stringify({ id: 'dev_x' }) } : {}),
      });
      expect(response.status, path).toBe(403);
      expect(((await response.json()) as any).error.data.code).toBe('console_header_required');
    }
  });
});

describe('organizations list', () => {
  it('searches 1,000 organizations by name (case-insensitive, wildcards literal) or id, and pages them newest first', async () => {
    const db = test.service.services.db;
    const start = Date.now() - 1_000_000;
    // One statement: the list must be usable at this size, and the test must not wait for 1,000 creates.
    const inserted = await db
      .insert(organizations)
      .values(Array.from({ length: 1000 }, (_, i) => ({ name: `Bulk Tenant ${String(i).padStart(4, '0')}${i === 7 ? ' 100%_real' : ''}`, createdAt: new Date(start + i * 1000) })))
      .returning({ id: organizations.id, name: organizations.name });
    const client = await signedIn();

    const first = await client.organizations.query({ query: 'bulk tenant', page: 1, page_size: 20 });
    expect(first.total).toBe(1000);
    expect(first.data.map((org) => org.name)).toEqual(Array.from({ length: 20 }, (_, i) => `Bulk Tenant ${String(999 - i).padStart(4, '0')}`));
    expect(first.data[0]).toEqual({ id: inserted[999]!.id, name: 'Bulk Tenant 0999', entitled: true, escalation_url: null, created_at: expect.any(String), spaces: 0, live_devices: 0 });

    // Every page, disjoint and complete, each answered quickly.
    const seen = new Set<string>();
    let slowest = 0;
    for (let page = 1; page <= 10; page++) {
      const began = performance.now();
      const result = await client.organizations.query({ query: 'BULK TENANT', page, page_size: 100 });
      slowest = Math.max(slowest, performance.now() - began);
      expect(result.data).toHaveLength(100);
      for (const org of result.data) seen.add(org.id);
    }
    expect(seen.size).toBe(1000);
    expect(slowest).toBeLessThan(1000);
    expect((await client.organizations.query({ query: 'bulk tenant', page: 11, page_size: 100 })).data).toEqual([]);

    expect((await client.organizations.query({ query: 'tenant 012' })).data.map((org) => org.name)).toEqual(
      Array.from({ length: 10 }, (_, i) => `Bulk Tenant 012${9 - i}`),
    );
    expect((await client.organizations.query({ query: '100%_' })).data.map((org) => org.name)).toEqual(['Bulk Tenant 0007 100%_real']);
    expect((await client.organizations.query({ query: '%' })).total).toBe(1);
    expect((await client.organizations.query({ query: inserted[42]!.id.toUpperCase() })).data.map((org) => org.name)).toEqual(['Bulk Tenant 0042']);
    expect(await client.organizations.query({ query: 'no such organization' })).toEqual({ data: [], total: 0, page: 1, page_size: 20 });

    for (const input of [{ query: '', page: 0 }, { query: '', page_size: 101 }, { query: 'x'.repeat(201) }]) {
      expect(await consoleFailure(client.organizations.query(input))).toMatchObject({ status: 400, code: 'invalid_request' });
    }
    await db.delete(organizations).where(like(organizations.name, 'Bulk Tenant %'));
  });

  it('changes quotas and the escalation URL through org:update’s domain function, audited with the operator', async () => {
    const client = await signedIn();
    const { org_id: orgId } = await client.createOrganization.mutate({ name: 'Settings Org', entitled: true, max_devices: null, max_device_seconds: null, escalation_url: null });
    expect(await consoleFailure(client.updateOrganization.mutate({ org_id: orgId, max_devices: 3, max_device_seconds: 60, escalation_url: 'ftp://x.test/' }))).toEqual({
      status: 400,
      code: 'invalid_request',
      param: 'escalation_url',
      message: 'The escalation URL must use https or http.',
    });
    expect(await client.organization.query({ org_id: orgId })).toMatchObject({ max_devices: null, max_device_seconds: null, escalation_url: null });
    expect(await consoleFailure(client.updateOrganization.mutate({ org_id: orgId, max_devices: -1, max_device_seconds: null, escalation_url: null }))).toMatchObject({ status: 400, param: 'max_devices' });
    expect(await consoleFailure(client.updateOrganization.mutate({ org_id: ORG, max_devices: 1, max_device_seconds: null, escalation_url: null }))).toMatchObject({ status: 404, code: 'organization_not_found' });

    // A first escalation URL brings its signing secret, shown in this answer only.
    const first = await client.updateOrganization.mutate({ org_id: orgId, max_devices: 3, max_device_seconds: 3600, escalation_url: 'https://hooks.example.test/escalations' });
    expect(first).toEqual({ org_id: orgId, escalation_signing_secret: expect.stringMatching(/^whsec_/) });
    expect(await client.organization.query({ org_id: orgId })).toMatchObject({ max_devices: 3, max_device_seconds: 3600, escalation_url: 'https://hooks.example.test/escalations' });
    expect(JSON.stringify(await client.organization.query({ org_id: orgId }))).not.toContain('whsec_');
    // A changed URL keeps the secret; removing it drops the secret; quotas clear to none.
    expect(await client.updateOrganization.mutate({ org_id: orgId, max_devices: null, max_device_seconds: null, escalation_url: 'https://hooks.example.test/other' })).toEqual({ org_id: orgId });
    expect(await client.rotateEscalationSecret.mutate({ org_id: orgId })).toMatchObject({ org_id: orgId });
    await client.updateOrganization.mutate({ org_id: orgId, max_devices: null, max_device_seconds: null, escalation_url: '' });
    expect(await consoleFailure(client.rotateEscalationSecret.mutate({ org_id: orgId }))).toMatchObject({ status: 409, code: 'no_escalation_url' });

    const audit = await client.listAuditEvents.query({ limit: 100 }, { context: { orgId } });
    const updates = audit.data.filter((event) => event.action === 'operator.organization.updated');
    expect(updates.map((event) => event.details)).toEqual([
      { escalation_url: 'removed', max_devices: null, max_device_seconds: null, via: 'console', operator: 'Ada' },
      { escalation_url: 'set', max_devices: null, max_device_seconds: null, via: 'console', operator: 'Ada' },
      { escalation_url: 'set', max_devices: 3, max_device_seconds: 3600, via: 'console', operator: 'Ada' },
    ]);
    expect(JSON.stringify(audit)).not.toContain('hooks.example.test');
  });
});

describe('an organization’s devices, tasks and escalations', () => {
  it('filters the inbox by organization, shows devices, tasks and the task page, and sleeps, wakes and deletes devices as /v1 does', async () => {
    const client = await signedIn();
    const tenants = [await createTenant(test, { name: 'Inbox Org A' }), await createTenant(test, { name: 'Inbox Org B' })];
    const started = [];
    for (const tenant of tenants) {
      const api = apiClient(test.url, await tenant.key(allScopes));
      const device = await api('POST', '/v1/devices', { space_id: tenant.spaceId, name: 'console-device' });
      expect(device.status).toBe(201);
      const task = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${pages.url('/plain')} then ask a human "Help ${tenant.orgId}?" then return the title` });
      started.push({ tenant, api, deviceId: device.body.id as string, taskId: task.body.id as string });
    }
    for (const { api, taskId } of started) await waitForTaskEnd(api, taskId, 20_000, ['needs_human']);
    const [a, b] = started as [(typeof started)[number], (typeof started)[number]];

    // The inbox: both organizations, or one.
    const all = await client.pendingEscalations.query();
    expect(all.filter((escalation) => [a.taskId, b.taskId].includes(escalation.task_id))).toHaveLength(2);
    const onlyA = await client.pendingEscalations.query({ org_id: a.tenant.orgId });
    expect(onlyA).toEqual([expect.objectContaining({ task_id: a.taskId, org_id: a.tenant.orgId, organization: 'Inbox Org A', reason: `Help ${a.tenant.orgId}?` })]);
    expect(await client.pendingEscalations.query({ org_id: ORG })).toEqual([]);
    expect(await consoleFailure(client.pendingEscalations.query({ org_id: 'not-a-uuid' }))).toMatchObject({ status: 400, code: 'invalid_request', param: 'org_id' });
    expect(await client.waitingOrganizations.query()).toEqual(
      expect.arrayContaining([
        { id: a.tenant.orgId, name: 'Inbox Org A', waiting: 1 },
        { id: b.tenant.orgId, name: 'Inbox Org B', waiting: 1 },
      ]),
    );

    // Devices with their current task; a busy device cannot sleep, as on /v1.
    const devices = await client.organizationDevices.query({ org_id: a.tenant.orgId });
    expect(devices).toEqual([
      expect.objectContaining({ id: a.deviceId, name: 'console-device', space_name: 'default', status: 'active', current_task_id: a.taskId, current_task: { status: 'needs_human', prompt: expect.stringContaining('ask a human') } }),
    ]);
    expect(await consoleFailure(client.sleepDevice.mutate({ id: a.deviceId }, { context: { orgId: a.tenant.orgId } }))).toMatchObject({ status: 409, code: 'device_busy' });
    // Another organization's device is not found through this one.
    for (const call of [client.sleepDevice, client.wakeDevice, client.deleteDevice]) {
      expect(await consoleFailure(call.mutate({ id: b.deviceId }, { context: { orgId: a.tenant.orgId } }))).toMatchObject({ status: 404, code: 'device_not_found' });
    }

    await client.answerEscalation.mutate({ escalation_id: onlyA[0]!.id, answer: 'yes', cleared: true });
    expect(await waitForTaskEnd(a.api, a.taskId)).toMatchObject({ status: 'succeeded', result: 'Plain' });
    expect(await client.pendingEscalations.query({ org_id: a.tenant.orgId })).toEqual([]);

    // The task page: the task, its organization and device, its steps in order, its escalation.
    const view = await client.task.query({ task_id: a.taskId });
    expect(view).toMatchObject({
      task: { id: a.taskId, status: 'succeeded', result: 'Plain' },
      organization: { id: a.tenant.orgId, name: 'Inbox Org A' },
      device: { id: a.deviceId, name: 'console-device' },
      escalations: [{ id: onlyA[0]!.id, status: 'resolved' }],
    });
    expect(view.steps.length).toBeGreaterThanOrEqual(3);
    expect(view.steps.map((step) => step.seq)).toEqual(view.steps.map((_, i) => i + 1));
    expect(view.steps.some((step) => step.url?.startsWith(pages.url('/plain')))).toBe(true);
    for (const id of ['task_00000000-0000-4000-8000-000000000000', 'nope']) {
      expect(await consoleFailure(client.task.query({ task_id: id }))).toMatchObject({ status: 404, code: 'task_not_found' });
    }
    expect(await client.recentTasks.query({ org_id: a.tenant.orgId })).toEqual([expect.objectContaining({ id: a.taskId, status: 'succeeded', device_name: 'console-device' })]);

    // Sleep, wake, delete: the API sees each change, audited with the operator's name.
    expect(await client.sleepDevice.mutate({ id: a.deviceId }, { context: { orgId: a.tenant.orgId } })).toMatchObject({ id: a.deviceId, status: 'sleeping' });
    expect((await a.api('GET', `/v1/devices/${a.deviceId}`)).body.status).toBe('sleeping');
    expect(await client.wakeDevice.mutate({ id: a.deviceId }, { context: { orgId: a.tenant.orgId } })).toMatchObject({ status: 'active' });
    expect(await client.deleteDevice.mutate({ id: a.deviceId }, { context: { orgId: a.tenant.orgId } })).toMatchObject({ status: 'terminated' });
    expect(await consoleFailure(client.deleteDevice.mutate({ id: a.deviceId }, { context: { orgId: a.tenant.orgId } }))).toMatchObject({ status: 410, code: 'device_terminated' });
    expect(await client.organizationDevices.query({ org_id: a.tenant.orgId })).toEqual([]);
    const changes = await test.service.services.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.orgId, a.tenant.orgId), eq(auditEvents.resourceId, a.deviceId)));
    const byAction = Object.fromEntries(changes.map((event) => [event.action, event]));
    for (const action of ['operator.device.slept', 'operator.device.woke', 'operator.device.terminated']) {
      expect(byAction[action], action).toMatchObject({ actor: 'system', details: expect.objectContaining({ via: 'console', operator: 'Ada' }) });
    }
    // The device's create, by its key, is not attributed to an operator.
    expect(byAction['operator.device.created']?.details).not.toHaveProperty('operator');

    // Usage, hour by hour: the tasks and steps of the last 24 h, and device time.
    const usage = await client.organizationUsage.query({ org_id: a.tenant.orgId });
    expect(usage).toHaveLength(24);
    expect(usage.map((hour) => hour.hour)).toEqual([...usage.map((hour) => hour.hour)].sort());
    expect(usage.reduce((sum, hour) => sum + hour.tasks, 0)).toBe(1);
    expect(usage.reduce((sum, hour) => sum + hour.steps, 0)).toBe(view.steps.length);
    expect(usage.at(-1)!.device_seconds).toBeGreaterThan(0);
    const v1 = (await a.api('GET', '/v1/usage')).body.data.find((row: { kind: string }) => row.kind === 'device_duration').quantity;
    expect(Math.abs(usage.reduce((sum, hour) => sum + hour.device_seconds, 0) - v1)).toBeLessThanOrEqual(2);

    // The audit log pages with cursors of its own list only.
    const firstPage = await client.listAuditEvents.query({ limit: 2 }, { context: { orgId: a.tenant.orgId } });
    expect(firstPage.data).toHaveLength(2);
    const second = await client.listAuditEvents.query({ limit: 2, cursor: firstPage.next_cursor }, { context: { orgId: a.tenant.orgId } });
    expect(second.data.map((event) => event.id)).not.toContain(firstPage.data[0]!.id);
    expect(await consoleFailure(client.listAuditEvents.query({ limit: 2, cursor: firstPage.next_cursor }, { context: { orgId: b.tenant.orgId } }))).toMatchObject({ status: 400, code: 'invalid_cursor' });

    await b.api('DELETE', `/v1/devices/${b.deviceId}`);
  });
});
