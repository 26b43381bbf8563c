import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { allScopes, createTenant, startTestService, type TestService } from '../support/test-service';

// The Python SDK (sdk-python/) as a Python user gets it: installed with pip into a virtual
// environment over Debian's python3-httpx and python3-websockets, then its pytest suite run
// against the real service started here, and `mypy --strict` over the package, its tests and
// its examples. The suite's journeys need the service; its transport and webhook tests do
// not (docs/api.md, "The Python SDK").

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const SDK = path.join(ROOT, 'sdk-python');
/** Debian's interpreter, which has python3-httpx, python3-websockets and python3-pytest. */
const PYTHON = process.env.OPERATOR_TEST_PYTHON ?? '/usr/bin/python3';
const SPACE_SCOPES = ['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write'] as const;
const ESCALATION_SCOPES = [...SPACE_SCOPES, 'operator:escalations:read'] as const;

let test: TestService;
let pages: TaskPages;
let scratch: string;

beforeAll(async () => {
  pages = await startTaskPages();
  // The public URL is the address the tests reach, so ws_url and resolve_url work as given.
  const port = await freePort();
  test = await startTestService({ PORT: String(port), OPERATOR_PUBLIC_URL: `http://127.0.0.1:${port}` });
  scratch = await mkdtemp(path.join(tmpdir(), 'python-sdk-'));
});
afterAll(async () => {
  await test?.stop();
  await pages?.close();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe('the Python SDK', () => {
  it('installs with pip, passes its pytest suite against the service, and type-checks with mypy --strict', async () => {
    // pip builds in the source folder; a copy keeps build/ and *.egg-info out of the checkout.
    const venv = path.join(scratch, 'venv');
    const source = path.join(scratch, 'sdk-python');
    await cp(SDK, source, { recursive: true, filter: (file) => !/(__pycache__|\.mypy_cache|\.pytest_cache|build|\.egg-info)$/.test(file) });
    await run(PYTHON, ['-m', 'venv', '--system-site-packages', venv]);
    const python = path.join(venv, 'bin', 'python');
    await run(python, ['-m', 'pip', 'install', '--no-build-isolation', '--no-index', '--quiet', source], { timeout: 120_000 });

    const tenant = await createTenant(test);
    const [escalationPort, exampleEscalationPort] = [await freePort(), await freePort()];
    const escalations = await createTenant(test, { escalationUrl: `http://127.0.0.1:${escalationPort}/escalations` });
    const exampleEscalations = await createTenant(test, { escalationUrl: `http://127.0.0.1:${exampleEscalationPort}/escalations` });
    const env = {
      ...process.env,
      OPERATOR_BASE_URL: test.url,
      OPERATOR_API_KEY: await tenant.key(allScopes),
      OPERATOR_TEST_SPACE_ID: tenant.spaceId,
      OPERATOR_TEST_READ_ONLY_KEY: await tenant.key(['operator:devices:read']),
      OPERATOR_TEST_SPACE_KEY: await tenant.key(SPACE_SCOPES, [tenant.spaceId]),
      OPERATOR_TEST_PAGES_URL: pages.url('').replace(/\/$/, ''),
      OPERATOR_TEST_ESCALATION_KEY: await escalations.key(ESCALATION_SCOPES, [escalations.spaceId]),
      OPERATOR_TEST_ESCALATION_SECRET: escalations.escalationSigningSecret!,
      OPERATOR_TEST_ESCALATION_PORT: String(escalationPort),
      OPERATOR_TEST_EXAMPLE_ESCALATION_KEY: await exampleEscalations.key(SPACE_SCOPES, [exampleEscalations.spaceId]),
      OPERATOR_TEST_EXAMPLE_ESCALATION_SECRET: exampleEscalations.escalationSigningSecret!,
      OPERATOR_TEST_EXAMPLE_ESCALATION_PORT: String(exampleEscalationPort),
    };
    // -P: the package comes from the virtual environment, never from the working directory.
    // mypy reads the source only: it runs while pytest waits on the service.
    const [pytest, mypy] = await Promise.all([
      run(python, ['-P', '-m', 'pytest', path.join(SDK, 'tests'), '-p', 'no:cacheprovider', '-q', '-rfE'], { cwd: scratch, env, timeout: 540_000 }).catch((error: { stdout: string; stderr: string }) => error),
      run('mypy', ['--strict', '--cache-dir', path.join(scratch, 'mypy-cache'), 'browser_device_operator', 'tests', 'examples'], { cwd: SDK }).catch((error: { stdout: string; stderr: string }) => error),
    ]);
    expect(pytest.stdout + pytest.stderr).toMatch(/^\d+ passed in /m);
    expect(pytest.stdout).not.toMatch(/failed|error|skipped/i);
    const passed = Number(/^(\d+) passed/m.exec(pytest.stdout)![1]);
    expect(passed).toBeGreaterThanOrEqual(60);

    expect(mypy.stdout + mypy.stderr).toMatch(/^Success: no issues found in \d+ source files/m);
  }, 600_000);
});
