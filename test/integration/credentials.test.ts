import { mkdtemp, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials } from '../../db/schema';
import { loadConfig } from '../../server/core/config';
import { resolveSecretsKey } from '../../server/domain/credentials/secrets-key';
import { taskVault } from '../../server/domain/credentials/task-vault';
import type { Scope } from '../../server/domain/keys/scopes';
import { apiClient, type ApiCall } from '../support/http';
import { findInDatabase } from '../support/secret-search';
import { createTenant, startAnotherInstance, startTestService, type TestService, type TestTenant } from '../support/test-service';

const PASSWORD = 'hunter2-Correct-Horse-7731';
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const NOTES = 'recovery-codes-55120-88231';
const PUSHED = 'PUSHED-CODE-4417';

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;

beforeAll(async () => {
  test = await startTestService();
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:credentials:read', 'operator:credentials:write', 'operator:audit:read']));
});
afterAll(async () => {
  await test?.stop();
});

function expectError(response: { status: number; body: any }, status: number, code: string, param?: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error.code).toBe(code);
  if (param !== undefined) expect(response.body.error.param).toBe(param);
}

let counter = 0;
function uniqueName(): string {
  counter += 1;
  return `cred-${counter}`;
}

describe('credential resource', () => {
  it('creates, lists, gets, patches and deletes without ever returning a value', async () => {
    const created = await api('POST', '/v1/credentials', {
      name: 'bank',
      space_id: tenant.spaceId,
      domains: ['Example.com', 'example.co.uk', 'example.com'],
      username: 'alice@example.com',
      password: PASSWORD,
      totp_secret: TOTP_SECRET,
      notes: NOTES,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^cred_[0-9a-f-]{36}$/),
      object: 'credential',
      name: 'bank',
      space_id: tenant.spaceId,
      domains: ['example.com', 'example.co.uk'],
      username: 'alice@example.com',
      has_password: true,
      has_totp: true,
      has_notes: true,
      created_at: expect.stringMatching(/Z$/),
      updated_at: created.body.created_at,
      last_used_at: null,
    });
    const id = created.body.id as string;
    const patched = await api('PATCH', `/v1/credentials/${id}`, { password: 'rotated-Pass-99120', totp_secret: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ has_password: true, has_totp: false, username: 'alice@example.com', domains: ['example.com', 'example.co.uk'] });
    const responses = [created, patched, await api('GET', `/v1/credentials/${id}`), await api('GET', `/v1/credentials?space_id=${tenant.spaceId}`), await api('GET', `/v1/audit?resource_id=${id}`)];
    expect((await api('GET', '/v1/credentials')).body.data.map((item: any) => item.id)).toContain(id);
    const audit = responses.at(-1)!.body.data;
    expect(audit.map((entry: any) => entry.action).sort()).toEqual(['operator.credential.created', 'operator.credential.updated']);
    expect(audit.find((entry: any) => entry.action === 'operator.credential.updated').details.changed.sort()).toEqual(['password', 'totp_secret']);
    for (const response of responses) {
      for (const secret of [PASSWORD, 'rotated-Pass-99120', TOTP_SECRET, NOTES]) expect(JSON.stringify(response.body)).not.toContain(secret);
    }
    // The database holds them sealed only: a dump shows none of them.
    expect(await findInDatabase(test.service.services.sql, [PASSWORD, 'rotated-Pass-99120', TOTP_SECRET, NOTES])).toEqual([]);

    expect((await api('DELETE', `/v1/credentials/${id}`)).status).toBe(204);
    expectError(await api('DELETE', `/v1/credentials/${id}`), 404, 'credential_not_found');
    expectError(await api('GET', `/v1/credentials/${id}`), 404, 'credential_not_found');
    const deletedAudit = await api('GET', `/v1/audit?resource_id=${id}`);
    expect(deletedAudit.body.data.map((entry: any) => entry.action)).toContain('operator.credential.deleted');
  });

  it('keeps names unique per Space: 409 credential_name_taken, and the same name in another Space is fine', async () => {
    const body = { name: 'shared-name', space_id: tenant.spaceId, domains: ['example.org'], password: PASSWORD };
    expect((await api('POST', '/v1/credentials', body)).status).toBe(201);
    expectError(await api('POST', '/v1/credentials', body), 409, 'credential_name_taken', 'name');
    const otherSpace = await tenant.newSpace('vault-other');
    const other = await api('POST', '/v1/credentials', { ...body, space_id: otherSpace });
    expect(other.status).toBe(201);
    const renamed = await api('POST', '/v1/credentials', { ...body, name: 'shared-name-2' });
    expectError(await api('PATCH', `/v1/credentials/${renamed.body.id}`, { name: 'shared-name' }), 409, 'credential_name_taken', 'name');
  });

  it('answers 400 invalid_request with the field at fault, and stores nothing', async () => {
    const valid = { name: 'valid-name', space_id: tenant.spaceId, domains: ['example.com'] };
    const cases: Array<[object, string]> = [
      [{ ...valid, name: 'Has Upper' }, 'name'],
      [{ ...valid, name: 'x'.repeat(65) }, 'name'],
      [{ ...valid, name: '' }, 'name'],
      [{ ...valid, domains: [] }, 'domains'],
      [{ ...valid, domains: Array.from({ length: 21 }, (_, index) => `d${index}.com`) }, 'domains'],
      [{ ...valid, domains: ['login.example.com'] }, 'domains'],
      [{ ...valid, domains: ['https://example.com'] }, 'domains'],
      [{ ...valid, domains: ['co.uk'] }, 'domains'],
      [{ ...valid, domains: ['com.au'] }, 'domains'],
      [{ ...valid, totp_secret: 'not base32 !' }, 'totp_secret'],
      [{ ...valid, totp_secret: TOTP_SECRET, totp_digits: 4 }, 'totp_digits'],
      [{ ...valid, totp_secret: TOTP_SECRET, totp_period: 5 }, 'totp_period'],
      [{ ...valid, totp_secret: TOTP_SECRET, totp_algorithm: 'MD5' }, 'totp_algorithm'],
      [{ ...valid, totp_digits: 8 }, 'totp_digits'],
      [{ ...valid, password: '' }, 'password'],
      [{ ...valid, unknown_field: 1 }, 'unknown_field'],
      [{ ...valid, space_id: '00000000-0000-4000-8000-000000000000' }, 'space_id'],
      [{ name: 'no-space', domains: ['example.com'] }, 'space_id'],
    ];
    for (const [body, param] of cases) expectError(await api('POST', '/v1/credentials', body), 400, 'invalid_request', param);
    const listed = await api('GET', `/v1/credentials?space_id=${tenant.spaceId}&limit=100`);
    expect(listed.body.data.map((item: any) => item.name)).not.toContain('valid-name');
    const created = await api('POST', '/v1/credentials', { ...valid, totp_secret: `otpauth://totp/Bank:alice?secret=${TOTP_SECRET}&digits=8&algorithm=SHA256&period=60` });
    expect(created.status).toBe(201);
    expectError(await api('PATCH', `/v1/credentials/${created.body.id}`, { domains: ['login.example.com'] }), 400, 'invalid_request', 'domains');
    expectError(await api('POST', `/v1/credentials/${created.body.id}/codes`, { code: 'has space' }), 400, 'invalid_request', 'code');
  });

  it('keeps tenants apart and enforces Spaces and scopes', async () => {
    const created = await api('POST', '/v1/credentials', { name: uniqueName(), space_id: tenant.spaceId, domains: ['example.com'], password: PASSWORD });
    const id = created.body.id as string;
    const stranger = await createTenant(test);
    const strangerApi = apiClient(test.url, await stranger.key(['operator:credentials:read', 'operator:credentials:write']));
    for (const [method, route, body] of [['GET', `/v1/credentials/${id}`], ['PATCH', `/v1/credentials/${id}`, { password: 'x-y-z-123' }], ['DELETE', `/v1/credentials/${id}`], ['POST', `/v1/credentials/${id}/codes`, { code: '123456' }]] as const) {
      expectError(await strangerApi(method, route, body), 404, 'credential_not_found');
    }
    expect((await strangerApi('GET', '/v1/credentials')).body.data).toEqual([]);
    expectError(await strangerApi('POST', '/v1/credentials', { name: 'x', space_id: tenant.spaceId, domains: ['example.com'] }), 400, 'invalid_request', 'space_id');

    // A key of another Space of the same organization: 403 on the credential, 403 on listing its Space.
    const otherSpace = await tenant.newSpace('scoped-other');
    const spaceApi = apiClient(test.url, await tenant.key(['operator:credentials:read', 'operator:credentials:write'], [otherSpace]));
    expectError(await spaceApi('GET', `/v1/credentials/${id}`), 403, 'insufficient_scope');
    expectError(await spaceApi('GET', `/v1/credentials?space_id=${tenant.spaceId}`), 403, 'insufficient_scope');
    expectError(await spaceApi('GET', '/v1/credentials'), 400, 'invalid_request', 'space_id');
    const own = await spaceApi('POST', '/v1/credentials', { name: 'in-other-space', domains: ['example.com'] });
    expect(own.status).toBe(201);
    expect(own.body.space_id).toBe(otherSpace);

    // Scope matrix: read routes need :read (or :write does not stand in), write routes :write.
    const matrix: Array<[Scope[], string, string, object | undefined, number]> = [
      [['operator:credentials:read'], 'GET', `/v1/credentials/${id}`, undefined, 200],
      [['operator:credentials:read'], 'GET', '/v1/credentials', undefined, 200],
      [['operator:credentials:read'], 'PATCH', `/v1/credentials/${id}`, { username: 'bob' }, 403],
      [['operator:credentials:read'], 'POST', '/v1/credentials', { name: uniqueName(), space_id: tenant.spaceId, domains: ['example.com'] }, 403],
      [['operator:credentials:read'], 'POST', `/v1/credentials/${id}/codes`, { code: '123456' }, 403],
      [['operator:credentials:read'], 'DELETE', `/v1/credentials/${id}`, undefined, 403],
      [['operator:credentials:write'], 'GET', `/v1/credentials/${id}`, undefined, 403],
      [['operator:credentials:write'], 'PATCH', `/v1/credentials/${id}`, { username: 'bob' }, 200],
      [['operator:credentials:write'], 'POST', `/v1/credentials/${id}/codes`, { code: '123456' }, 201],
      [['operator:tasks:write', 'operator:devices:read'], 'GET', '/v1/credentials', undefined, 403],
      [['operator:tasks:write'], 'POST', '/v1/credentials', { name: uniqueName(), space_id: tenant.spaceId, domains: ['example.com'] }, 403],
    ];
    for (const [scopes, method, route, body, status] of matrix) {
      const response = await apiClient(test.url, await tenant.key(scopes))(method, route, body);
      expect(response.status, `${scopes.join(',')} ${method} ${route}`).toBe(status);
      if (status === 403) expect(response.body.error.code).toBe('insufficient_scope');
    }
    expectError(await apiClient(test.url)('GET', '/v1/credentials'), 401, 'invalid_api_key');
  });
});

describe('pushed codes', () => {
  it('are sealed, expire in 5 minutes and are used once, freshest first', async () => {
    const created = await api('POST', '/v1/credentials', { name: uniqueName(), space_id: tenant.spaceId, domains: ['example.com'] });
    const id = created.body.id as string;
    const older = await api('POST', `/v1/credentials/${id}/codes`, { code: 'OLDER-1' });
    const pushed = await api('POST', `/v1/credentials/${id}/codes`, { code: PUSHED });
    expect(older.status).toBe(201);
    expect(pushed.body).toEqual({ object: 'credential_code', credential_id: id, expires_at: expect.any(String) });
    const ttl = Date.parse(pushed.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(4.5 * 60_000);
    expect(ttl).toBeLessThanOrEqual(5 * 60_000 + 2_000);
    expect(await findInDatabase(test.service.services.sql, [PUSHED])).toEqual([]);

    const [row] = await test.service.services.db.select().from(credentials).where(eq(credentials.id, id.slice('cred_'.length)));
    const vault = taskVault({ db: test.service.services.db, secrets: test.service.services.secrets }, { id: '00000000-0000-4000-8000-000000000001', orgId: tenant.orgId, spaceId: row!.spaceId }, { codeWaitMs: 0 });
    const fill = (pageUrl: string) => vault.value({ name: row!.name, field: 'code', pageUrl, answeredCode: null }, new AbortController().signal);
    // The phishing guard comes first: a page of another domain takes no code.
    expect(await fill('https://example.net/login')).toEqual({ ok: false, refusal: 'credential_domain_mismatch' });
    expect(await fill('https://login.example.com/2fa')).toEqual({ ok: true, value: PUSHED });
    expect(await fill('https://login.example.com/2fa')).toEqual({ ok: true, value: 'OLDER-1' });
    expect(await fill('https://login.example.com/2fa')).toEqual({ ok: false, refusal: 'code_not_pushed' });
    const audit = await api('GET', `/v1/audit?resource_id=${id}`);
    expect(audit.body.data.filter((entry: any) => entry.action === 'operator.credential.used')).toHaveLength(2);
    expect(JSON.stringify(audit.body)).not.toContain(PUSHED);
    expect((await api('GET', `/v1/credentials/${id}`)).body.last_used_at).not.toBeNull();
  });
});

describe('the vault key', () => {
  it('re-encrypts under a new key with the previous one given, and refuses to start with neither', async () => {
    const created = await api('POST', '/v1/credentials', { name: uniqueName(), space_id: tenant.spaceId, domains: ['example.com'], password: PASSWORD });
    const uuid = (created.body.id as string).slice('cred_'.length);
    const sealedBefore = (await test.service.services.db.select().from(credentials).where(eq(credentials.id, uuid)))[0]!.passwordSealed!;
    const newKey = randomBytes(32).toString('base64');
    const rotated = await startAnotherInstance(test, { OPERATOR_SECRETS_KEY: newKey, OPERATOR_SECRETS_KEY_PREVIOUS: test.env.OPERATOR_SECRETS_KEY! });
    try {
      const [row] = await rotated.services.db.select().from(credentials).where(eq(credentials.id, uuid));
      expect(row!.passwordSealed).not.toBe(sealedBefore);
      expect(row!.passwordSealed!.split('.')[1]).not.toBe(sealedBefore.split('.')[1]);
      const vault = taskVault({ db: rotated.services.db, secrets: rotated.services.secrets }, { id: '00000000-0000-4000-8000-000000000002', orgId: tenant.orgId, spaceId: tenant.spaceId });
      expect(await vault.value({ name: row!.name, field: 'password', pageUrl: 'https://example.com/', answeredCode: null }, new AbortController().signal)).toEqual({ ok: true, value: PASSWORD });
    } finally {
      await rotated.close();
    }
    // A third key that opens none of them: the start stops, and changes nothing.
    await expect(startAnotherInstance(test, { OPERATOR_SECRETS_KEY: randomBytes(32).toString('base64') })).rejects.toThrow(/OPERATOR_SECRETS_KEY_PREVIOUS/);
    // No key at all on DATABASE_URL: refused.
    await expect(startAnotherInstance(test, { OPERATOR_SECRETS_KEY: '' })).rejects.toThrow(/OPERATOR_SECRETS_KEY is required/);
    // Put the database back under the test service's key for the tests after this one.
    const back = await startAnotherInstance(test, { OPERATOR_SECRETS_KEY: test.env.OPERATOR_SECRETS_KEY!, OPERATOR_SECRETS_KEY_PREVIOUS: newKey });
    await back.close();
  });

  it('with the embedded database and no key, generates one into the data directory, 0600, and keeps it', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'operator-vault-key-'));
    try {
      const first = await resolveSecretsKey(null, true, dataDir);
      expect(first.origin).toBe('generated');
      expect(first.key).toHaveLength(32);
      expect((await stat(path.join(dataDir, 'secrets.key'))).mode & 0o777).toBe(0o600);
      const again = await resolveSecretsKey(null, true, dataDir);
      expect(again).toEqual({ key: first.key, origin: 'data_directory' });
      await expect(resolveSecretsKey(null, false, dataDir)).rejects.toThrow(/OPERATOR_SECRETS_KEY is required/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a key that is not 32 bytes of base64', () => {
    expect(() => loadConfig({ OPERATOR_SECRETS_KEY: 'c2hvcnQ=' })).toThrow(/OPERATOR_SECRETS_KEY must be 32 bytes/);
  });
});
