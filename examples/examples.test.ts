import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devices } from '../db/schema';
import { freePort } from '../test/support/free-port';
import { startTaskPages, type TaskPages } from '../test/support/task-pages';
import { createTenant, type TestService, startTestService } from '../test/support/test-service';

// Each example runs as a user would run it (`npx tsx examples/<name>.ts`), against the real
// service, with a key restricted to one Space so the examples need no space_id.

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const SCOPES = ['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write'] as const;

let test: TestService;
let pages: TaskPages;

beforeAll(async () => {
  pages = await startTaskPages();
  test = await startTestService();
});
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

async function example(name: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'examples', name)], {
    cwd: ROOT,
    env: { ...process.env, OPERATOR_BASE_URL: test.url, EXAMPLE_URL: pages.url('/plain'), ...env },
    timeout: 120_000,
  });
  return stdout;
}

describe('examples', () => {
  it('run-task.ts prints each step and the result', async () => {
    const tenant = await createTenant(test);
    const output = await example('run-task.ts', { OPERATOR_API_KEY: await tenant.key(SCOPES, [tenant.spaceId]) });
    expect(output).toMatch(/^step 1 /m);
    expect(output).toContain('task succeeded: "Plain"');
  });

  it('escalation-receiver.ts answers the escalation its task raises, and the task resumes', async () => {
    const port = await freePort();
    const tenant = await createTenant(test, { escalationUrl: `http://127.0.0.1:${port}/escalations` });
    const output = await example('escalation-receiver.ts', {
      OPERATOR_API_KEY: await tenant.key(SCOPES, [tenant.spaceId]),
      ESCALATION_SECRET: tenant.escalationSigningSecret!,
      RECEIVER_PORT: String(port),
    });
    expect(output).toMatch(/^escalation esc_\S+: Which plan should I pick\?/m);
    expect(output).toContain('The Pro plan');
    expect(output).toContain('task succeeded: "Plain"');
  });

  it('ten-devices.ts runs a task on each of 10 devices at once', async () => {
    const tenant = await createTenant(test);
    const output = await example('ten-devices.ts', { OPERATOR_API_KEY: await tenant.key(SCOPES, [tenant.spaceId]) });
    expect(output).toContain('10/10 succeeded');
    const rows = await test.service.services.db.select({ status: devices.status }).from(devices).where(eq(devices.orgId, tenant.orgId));
    expect(rows.map((row) => row.status)).toEqual(Array(10).fill('terminated'));
    // Ten Chromium launches, each under its keeper, and ten closes on two cores.
  }, 150_000);
});
