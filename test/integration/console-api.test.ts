import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, consoleSessions } from '../../db/schema';
import { createOperator } from '../../server/domain/console/operator-accounts';
import { consoleClient as makeConsoleClient, consoleFailure } from '../support/console-client';
import { apiClient } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { startTestService, type TestService } from '../support/test-service';

// The operator console's API (/console/api): sign-in with a console key, organizations,
// Spaces and keys as the CLI manages them, and answering escalations. Real server,
// PostgreSQL and Chromium; called with the same tRPC client the console pages use.

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

const consoleClient = () => makeConsoleClient(test.url);
const failure = consoleFailure;

describe('console sign-in', () => {
  it('refuses calls without the console header, and everything but sign-in before signing in', async () => {
    const bare = await fetch(`${test.url}/console/api/me`);
    expect(bare.status).toBe(403);
    expect(((await bare.json()) as any).error).toEqual({
      message: 'Console calls must come from the console.',
      code: -32003,
      data: { code: 'console_header_required', httpStatus: 403 },
    });
    const { client } = consoleClient();
    expect(await failure(client.me.query())).toEqual({ status: 401, code: 'console_sign_in_required', message: 'Sign in with your console key.' });
    const wrongKey = { status: 401, code: 'invalid_console_key', message: 'That console key is not valid.' };
    expect(await failure(client.signIn.mutate({ console_key: 'svc_console_aaaaaaaaaaaa_' + 'A'.repeat(43) }))).toEqual(wrongKey);
    expect(await failure(client.signIn.mutate({ console_key: consoleKey.slice(0, -1) + (consoleKey.endsWith('A') ? 'B' : 'A') }))).toEqual(wrongKey);
  });

  it('answers an unknown call, a wrong method and unparsable input with the error table, never a 500', async () => {
    const call = async (path: string, init: RequestInit = {}) => {
      const response = await fetch(`${test.url}/console/api/${path}`, { ...init, headers: { 'x-svc-console': '1', 'Content-Type': 'application/json' } });
      const { error } = (await response.json()) as any;
      return { status: response.status, code: error.data.code, keys: Object.keys(error.data) };
    };
    expect(await call('nothingHere')).toEqual({ status: 404, code: 'not_found', keys: ['code', 'httpStatus'] });
    expect(await call('signIn')).toEqual({ status: 405, code: 'method_not_allowed', keys: ['code', 'httpStatus'] });
    expect(await call('signIn', { method: 'POST', body: '{"console_key": ' })).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(await call('keys?input=%7Bnot-json')).toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('signs in with a console key into an HttpOnly, SameSite=Strict cookie stored only as a hash, and signs out', async () => {
    const { client, jar } = consoleClient();
    expect(await client.signIn.mutate({ console_key: consoleKey })).toEqual({ name: 'Ada' });
    expect(jar.setCookie).toMatch(/^svc_console=constok_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    expect(await client.me.query()).toEqual({ name: 'Ada' });
    const token = jar.cookie.split('=')[1]!;
    const stored = await test.service.services.db.select().from(consoleSessions);
    expect(JSON.stringify(stored)).not.toContain(token);

    const oldCookie = jar.cookie;
    await client.signOut.mutate();
    jar.cookie = oldCookie;
    expect(await failure(client.me.query())).toMatchObject({ status: 401, code: 'console_sign_in_required' });
    expect((await test.service.services.db.select().from(consoleSessions).where(eq(consoleSessions.operatorId, stored[0]!.operatorId))).length).toBe(stored.length - 1);
  });
});

describe('console administration', () => {
  it('creates organizations, Spaces and keys that work on the API, and revokes keys', async () => {
    const { client } = consoleClient();
    await client.signIn.mutate({ console_key: consoleKey });
    expect(await failure(client.createOrganization.mutate({ name: 'Bad', entitled: true, max_devices: null, max_device_seconds: null, escalation_url: 'ftp://x.test/' }))).toEqual({
      status: 400,
      code: 'invalid_request',
      param: 'escalation_url',
      message: 'The escalation URL must use https or http.',
    });
    expect(await failure(client.createOrganization.mutate({ name: '', entitled: true, max_devices: null, max_device_seconds: null, escalation_url: null }))).toMatchObject({
      status: 400,
      code: 'invalid_request',
      param: 'name',
    });
    const { org_id: orgId } = await client.createOrganization.mutate({ name: 'Console Org', entitled: true, max_devices: 2, max_device_seconds: null, escalation_url: null });
    const { space_id: spaceId } = await client.createSpace.mutate({ org_id: orgId, name: 'main' });
    const organization = await client.organization.query({ org_id: orgId });
    expect(organization).toMatchObject({ name: 'Console Org', entitled: true, max_devices: 2, spaces: [{ id: spaceId, name: 'main' }] });

    const created = await client.createKey.mutate({ org_id: orgId, scopes: ['operator:devices:read'], space_ids: [spaceId], env: 'live' });
    expect(created.key).toMatch(/^svc_operator_live_/);
    const whoami = await apiClient(test.url, created.key)('GET', '/v1/whoami');
    expect(whoami.status).toBe(200);
    const listed = await client.keys.query({ org_id: orgId });
    expect(listed).toEqual([expect.objectContaining({ key_id: created.key_id, scopes: ['operator:devices:read'], space_ids: [spaceId], revoked_at: null })]);
    expect(JSON.stringify(listed)).not.toContain(created.key.split('_').at(-1));
    expect(await failure(client.createKey.mutate({ org_id: orgId, scopes: ['operator:everything'], space_ids: [], env: 'test' }))).toEqual({
      status: 400,
      code: 'invalid_request',
      param: 'scopes.0',
      message: 'Invalid value for scopes.0: unknown scope.',
    });
    const { org_id: otherOrgId } = await client.createOrganization.mutate({ name: 'Other Org', entitled: true, max_devices: null, max_device_seconds: null, escalation_url: null });
    const { space_id: foreignSpaceId } = await client.createSpace.mutate({ org_id: otherOrgId, name: 'theirs' });
    expect(await failure(client.createKey.mutate({ org_id: orgId, scopes: ['operator:devices:read'], space_ids: [foreignSpaceId], env: 'test' }))).toEqual({
      status: 400,
      code: 'invalid_request',
      param: 'space_ids',
      message: 'Every Space must be a Space of the organization.',
    });
    expect(await failure(client.createSpace.mutate({ org_id: '00000000-0000-4000-8000-000000000000', name: 'nowhere' }))).toEqual({
      status: 404,
      code: 'organization_not_found',
      message: 'No such organization.',
    });

    // The audit trail names the operator behind each change.
    const auditor = await client.createKey.mutate({ org_id: orgId, scopes: ['operator:audit:read'], space_ids: [], env: 'test' });
    const audit = await apiClient(test.url, auditor.key)('GET', `/v1/audit?resource_id=${created.key_id}`);
    expect(audit.body.data).toEqual([expect.objectContaining({ action: 'operator.api_key.created', actor: 'system', details: expect.objectContaining({ via: 'console', operator: 'Ada' }) })]);

    await client.revokeKey.mutate({ key_id: created.key_id });
    const deadline = Date.now() + 2_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) status = (await apiClient(test.url, created.key)('GET', '/v1/whoami')).status;
    expect(status).toBe(401);
    expect(await failure(client.revokeKey.mutate({ key_id: created.key_id }))).toEqual({ status: 404, code: 'api_key_not_found', message: 'No such active API key.' });
  });

  it('shows an organization’s escalation signing secret once on creation and on each rotation, audited with the operator', async () => {
    const { client } = consoleClient();
    await client.signIn.mutate({ console_key: consoleKey });
    const created = await client.createOrganization.mutate({ name: 'Signed Org', entitled: true, max_devices: null, max_device_seconds: null, escalation_url: 'https://escalations.example/hook' });
    expect(created).toEqual({ org_id: expect.any(String), escalation_signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) });
    const rotated = await client.rotateEscalationSecret.mutate({ org_id: created.org_id });
    expect(rotated).toEqual({ org_id: created.org_id, escalation_signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) });
    expect(rotated.escalation_signing_secret).not.toBe(created.escalation_signing_secret);

    // Never listed again, and nothing to rotate without an escalation URL.
    const listed = [await client.organizations.query({ query: 'Signed Org' }), await client.organization.query({ org_id: created.org_id })];
    expect(JSON.stringify(listed)).toContain(created.org_id);
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    const unsigned = await client.createOrganization.mutate({ name: 'Unsigned Org', entitled: true, max_devices: null, max_device_seconds: null, escalation_url: null });
    expect(unsigned).toEqual({ org_id: expect.any(String) });
    expect(await failure(client.rotateEscalationSecret.mutate({ org_id: unsigned.org_id }))).toEqual({
      status: 409,
      code: 'no_escalation_url',
      message: 'The organization has no escalation URL to sign deliveries for.',
    });

    const [audit] = await test.service.services.db.select().from(auditEvents).where(eq(auditEvents.action, 'operator.organization.escalation_secret_rotated'));
    expect(audit).toMatchObject({ resourceId: created.org_id, details: { via: 'console', operator: 'Ada' } });
  });

  it('lists pending escalations of every organization and answers one, resuming its task', async () => {
    const { client } = consoleClient();
    await client.signIn.mutate({ console_key: consoleKey });
    const { org_id: orgId } = await client.createOrganization.mutate({ name: 'Help Org', entitled: true, max_devices: null, max_device_seconds: null, escalation_url: null });
    const { space_id: spaceId } = await client.createSpace.mutate({ org_id: orgId, name: 'main' });
    const { key } = await client.createKey.mutate({
      org_id: orgId,
      scopes: ['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:escalations:read'],
      space_ids: [],
      env: 'test',
    });
    const api = apiClient(test.url, key);
    const device = await api('POST', '/v1/devices', { space_id: spaceId });
    const task = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${pages.url('/plain')} then ask a human "Which plan?" then return the title` });
    await waitForTaskEnd(api, task.body.id, 20_000, ['needs_human']);

    const pending = (await client.pendingEscalations.query()).find((escalation) => escalation.task_id === task.body.id);
    expect(pending).toMatchObject({ organization: 'Help Org', reason: 'Which plan?', status: 'pending' });
    expect(await client.answerEscalation.mutate({ escalation_id: pending!.id, answer: 'Pro', cleared: true })).toEqual({ applied: true, id: pending!.id, object: 'escalation', status: 'resolved' });
    expect(await waitForTaskEnd(api, task.body.id)).toMatchObject({ status: 'succeeded', result: 'Plain' });
    expect((await api('GET', `/v1/escalations/${pending!.id}`)).body).toMatchObject({ answer: 'Pro', resolved_by: 'operator:Ada' });
    expect((await client.pendingEscalations.query()).map((escalation) => escalation.id)).not.toContain(pending!.id);
    expect(await client.answerEscalation.mutate({ escalation_id: pending!.id, answer: 'again', cleared: true })).toMatchObject({ applied: false });
    for (const id of ['esc_00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      expect(await failure(client.answerEscalation.mutate({ escalation_id: id, answer: 'Pro', cleared: true }))).toEqual({ status: 404, code: 'escalation_not_found', message: 'No such escalation.' });
    }
    await api('DELETE', `/v1/devices/${device.body.id}`);
  });
});
