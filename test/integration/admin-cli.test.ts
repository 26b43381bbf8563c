import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/service-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

// The operator CLI exactly as CONTRACT.md lists it, run as operators run it: one JSON
// object on stdout and exit 0, or an error and exit 1.
const run = promisify(execFile);
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'server/cli/admin.ts'), ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, DATABASE_URL: database.url, OPERATOR_LOG_LEVEL: 'silent' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

function json(output: { code: number; stdout: string }) {
  expect(output.code).toBe(0);
  const lines = output.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!);
}

describe('npm run admin', () => {
  it('creates organizations, Spaces and keys, revokes keys, and prints one JSON object each', async () => {
    const acme = json(await admin('org:create', '--name', 'Acme', '--not-entitled', '--max-devices', '3', '--max-device-seconds', '600', '--escalation-url', 'https://example.test/hook'));
    // With an escalation URL, the secret its deliveries are signed with is shown this once.
    expect(acme).toEqual({ org_id: expect.stringMatching(/^[0-9a-f-]{36}$/), escalation_signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) });
    const orgId: string = acme.org_id;
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const [org] = await sql`select entitled, max_devices, max_device_seconds, escalation_url, escalation_signing_secret from organizations where id = ${orgId}`;
    await sql.end();
    expect(org).toEqual({ entitled: false, max_devices: 3, max_device_seconds: 600, escalation_url: 'https://example.test/hook', escalation_signing_secret: acme.escalation_signing_secret });
    const { space_id: spaceId } = json(await admin('space:create', '--org', orgId, '--name', 'default'));
    expect(spaceId).toMatch(/^[0-9a-f-]{36}$/);

    const created = json(await admin('key:create', '--org', orgId, '--scopes', 'operator:devices:read,operator:tasks:read', '--spaces', spaceId, '--env', 'live'));
    expect(created).toEqual({
      key: expect.stringMatching(/^svc_operator_live_[a-z2-7]{12}_[A-Za-z0-9-]{43}$/),
      key_id: created.key.split('_')[3],
      scopes: ['operator:devices:read', 'operator:tasks:read'],
      space_ids: [spaceId],
    });
    expect(json(await admin('key:revoke', '--key-id', created.key_id))).toEqual({ revoked: true });

    const operator = json(await admin('operator:create', '--name', 'Ada'));
    expect(operator).toEqual({ operator_id: expect.stringMatching(/^[0-9a-f-]{36}$/), console_key: expect.stringMatching(/^svc_console_[a-z2-7]{12}_[A-Za-z0-9-]{43}$/) });
    const reader = postgres(database.url, { max: 1, onnotice: () => {} });
    const [stored] = await reader`select key_id, secret_hash from operators where id = ${operator.operator_id}`;
    await reader.end();
    expect(operator.console_key).toContain(stored!.key_id);
    expect(operator.console_key).not.toContain(stored!.secret_hash);

    const again = await admin('key:revoke', '--key-id', created.key_id);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(JSON.parse(again.stderr.trim())).toEqual({ error: 'No such active API key.', code: 'api_key_not_found' });
  });

  it('rotates an organization’s escalation signing secret, printing the new one once and auditing who did', async () => {
    const { org_id: orgId, escalation_signing_secret: first } = json(await admin('org:create', '--name', 'Signed', '--escalation-url', 'https://example.test/escalate'));
    const rotated = json(await admin('org:rotate-escalation-secret', '--org', orgId));
    expect(rotated).toEqual({ org_id: orgId, escalation_signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) });
    expect(rotated.escalation_signing_secret).not.toBe(first);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const [org] = await sql`select escalation_signing_secret from organizations where id = ${orgId}`;
    const audit = await sql`select action, details::text from audit_events where resource_id = ${orgId} order by created_at`;
    await sql.end();
    expect(org!.escalation_signing_secret).toBe(rotated.escalation_signing_secret);
    expect(audit.map((row) => row.action)).toEqual(['operator.organization.created', 'operator.organization.escalation_secret_rotated']);
    expect(JSON.parse(audit[1]!.details)).toEqual({ via: 'cli' });
    for (const row of audit) expect(row.details).not.toContain('whsec_');
  });

  it('changes an organization’s quotas and escalation URL with org:update, leaving what is not given, `none` clearing', async () => {
    const { org_id: orgId } = json(await admin('org:create', '--name', 'Updated', '--max-devices', '2'));
    const first = json(await admin('org:update', '--org', orgId, '--max-device-seconds', '600', '--escalation-url', 'https://example.test/hook'));
    expect(first).toEqual({ org_id: orgId, escalation_signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) });
    expect(json(await admin('org:update', '--org', orgId, '--max-devices', 'none'))).toEqual({ org_id: orgId });
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const [org] = await sql`select max_devices, max_device_seconds, escalation_url, escalation_signing_secret from organizations where id = ${orgId}`;
    const audit = await sql`select details::text from audit_events where resource_id = ${orgId} and action = 'operator.organization.updated' order by created_at`;
    await sql.end();
    expect(org).toEqual({ max_devices: null, max_device_seconds: 600, escalation_url: 'https://example.test/hook', escalation_signing_secret: first.escalation_signing_secret });
    expect(audit.map((row) => JSON.parse(row.details))).toEqual([
      { max_device_seconds: 600, escalation_url: 'set', via: 'cli' },
      { max_devices: null, via: 'cli' },
    ]);
    const refused = await admin('org:update', '--org', orgId, '--max-devices', 'many');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toEqual({ error: '--max-devices must be a whole number' });
  });

  it('exits 1 with a message for unknown commands, scopes, organizations and foreign Spaces', async () => {
    const created = json(await admin('org:create', '--name', 'Other'));
    // No escalation URL, no secret: the output is exactly CONTRACT.md's.
    expect(created).toEqual({ org_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const orgId: string = created.org_id;
    const { org_id: otherOrg } = json(await admin('org:create', '--name', 'Third'));
    const { space_id: foreignSpace } = json(await admin('space:create', '--org', otherOrg, '--name', 's'));
    // The domain's refusals carry the error table's code; a command line the CLI cannot run has none.
    // Run at once: each is a process of its own, and none changes anything.
    const refusals = [
      [['nope'], undefined],
      [['key:create', '--org', orgId, '--scopes', 'operator:everything'], 'invalid_request'],
      [['key:create', '--org', '00000000-0000-4000-8000-000000000000', '--scopes', 'operator:devices:read'], 'organization_not_found'],
      [['key:create', '--org', orgId, '--scopes', 'operator:devices:read', '--spaces', foreignSpace], 'invalid_request'],
      [['org:create', '--name', 'X', '--max-devices', 'many'], undefined],
      [['org:create', '--name', 'X', '--escalation-url', 'ftp://example.test/hook'], 'invalid_request'],
      [['org:create', '--name', 'X', '--escalation-url', 'http://169.254.169.254/latest'], 'invalid_request'],
      [['org:create', '--name', 'X', '--escalation-url', 'https://user:pw@example.test/hook'], 'invalid_request'],
      [['space:create', '--org', orgId], undefined],
      [['org:rotate-escalation-secret', '--org', orgId], 'no_escalation_url'],
      [['org:rotate-escalation-secret', '--org', '00000000-0000-4000-8000-000000000000'], 'organization_not_found'],
    ] as const;
    const results = await Promise.all(refusals.map(([args]) => admin(...args)));
    // A scope that does not exist: the refusal lists those that do.
    expect(JSON.parse(results[1]!.stderr.trim()).error).toContain('operator:sessions:write, operator:sessions:control');
    for (const [index, [args, refusal]] of refusals.entries()) {
      const result = results[index]!;
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: '' });
      expect(JSON.parse(result.stderr.trim())).toEqual({ error: expect.any(String), ...(refusal === undefined ? {} : { code: refusal }) });
    }
  }, 120_000);
});
