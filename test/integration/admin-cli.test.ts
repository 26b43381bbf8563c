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
    const { org_id: orgId } = json(await admin('org:create', '--name', 'Acme', '--not-entitled', '--max-devices', '3', '--max-device-seconds', '600', '--escalation-url', 'https://example.test/hook'));
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const [org] = await sql`select entitled, max_devices, max_device_seconds, escalation_url from organizations where id = ${orgId}`;
    await sql.end();
    expect(org).toEqual({ entitled: false, max_devices: 3, max_device_seconds: 600, escalation_url: 'https://example.test/hook' });
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
    expect(JSON.parse(again.stderr.trim()).error).toContain(created.key_id);
  });

  it('exits 1 with a message for unknown commands, scopes, organizations and foreign Spaces', async () => {
    const { org_id: orgId } = json(await admin('org:create', '--name', 'Other'));
    const { org_id: otherOrg } = json(await admin('org:create', '--name', 'Third'));
    const { space_id: foreignSpace } = json(await admin('space:create', '--org', otherOrg, '--name', 's'));
    for (const args of [
      ['nope'],
      ['key:create', '--org', orgId, '--scopes', 'operator:everything'],
      ['key:create', '--org', '00000000-0000-4000-8000-000000000000', '--scopes', 'operator:devices:read'],
      ['key:create', '--org', orgId, '--scopes', 'operator:devices:read', '--spaces', foreignSpace],
      ['org:create', '--name', 'X', '--max-devices', 'many'],
      ['org:create', '--name', 'X', '--escalation-url', 'ftp://example.test/hook'],
      ['org:create', '--name', 'X', '--escalation-url', 'http://169.254.169.254/latest'],
      ['org:create', '--name', 'X', '--escalation-url', 'https://user:pw@example.test/hook'],
      ['space:create', '--org', orgId],
    ]) {
      const result = await admin(...args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: '' });
      expect(typeof JSON.parse(result.stderr.trim()).error).toBe('string');
    }
  });
});
