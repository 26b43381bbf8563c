import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedRouteKeys } from '../support/route-catalogue';
import { startPrismProxy, type PrismProxy } from '../support/prism-proxy';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The served OpenAPI document as the tools people point at it use it: openapi-typescript's
// output compiles under `tsc --strict` without skipLibCheck, with a JSON-typed Task.result
// through openapi-fetch; and Prism's validating proxy, in front of the service, finds no
// violation in a run of every operation of the document (successes and error answers).

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

let test: TestService;
let tenant: TestTenant;
let key: string;
let scratch: string;
let documentText: string;

beforeAll(async () => {
  test = await startTestService();
  tenant = await createTenant(test);
  key = await tenant.key(allScopes);
  scratch = await mkdtemp(path.join(tmpdir(), 'openapi-tools-'));
  // The generated client resolves openapi-fetch as a project would: from its node_modules.
  await symlink(path.join(ROOT, 'node_modules'), path.join(scratch, 'node_modules'));
  documentText = await (await fetch(`${test.url}/v1/openapi.json`)).text();
  await writeFile(path.join(scratch, 'openapi.json'), documentText);
});
afterAll(async () => {
  await test?.stop();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe('openapi-typescript', () => {
  it('generates types that compile under tsc --strict without skipLibCheck, Task.result typed as JSON', async () => {
    const ast = await openapiTS(JSON.parse(documentText) as Parameters<typeof openapiTS>[0]);
    await writeFile(path.join(scratch, 'schema.ts'), astToString(ast));
    await writeFile(
      path.join(scratch, 'client.ts'),
      `import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type JsonValue = components['schemas']['JsonValue'];
type IsAny<T> = 0 extends 1 & T ? true : false;
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1/v1' });

export async function resultOf(id: string): Promise<JsonValue | null> {
  const { data, error } = await client.GET('/tasks/{id}', { params: { path: { id } } });
  if (error !== undefined) throw new Error(error.error.code);
  // A result that became \`any\` (as it did when the types did not compile) fails here.
  const typed: IsAny<typeof data.result> = false;
  const result: JsonValue | null = data.result;
  if (result !== null && typeof result === 'object' && !Array.isArray(result)) return result['title'] ?? null;
  return typed ? null : result;
}

export const extracted: JsonValue = { items: [{ name: 'Tea', price: 3.5, tags: ['hot'] }, [1, [2]]], next: null };
// @ts-expect-error a function is not a JSON value
export const notJson: JsonValue = { at: () => 1 };
`,
    );
    await writeFile(
      path.join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [] },
        files: ['schema.ts', 'client.ts'],
      }),
    );
    const compiled = await run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', scratch]).catch((error: { stdout: string }) => error);
    expect(compiled.stdout).toBe('');
  });
});

interface PrismCall {
  operation: string;
  status: number;
  violations: string | null;
  /** Set by the service on every answer: absent, Prism answered by itself. */
  requestId: string | null;
  body: string;
}

describe('Prism validating proxy', () => {
  let prism: PrismProxy;
  const calls: PrismCall[] = [];

  beforeAll(async () => {
    prism = await startPrismProxy(path.join(scratch, 'openapi.json'), `${test.url}/v1`);
  });
  afterAll(async () => {
    await prism?.close();
  });

  /** One request through Prism: `template` as the document names the path, `{name}`s filled from `params`. */
  async function call(method: string, template: string, options: { params?: Record<string, string | number>; body?: unknown; headers?: Record<string, string>; bearer?: string | null } = {}): Promise<PrismCall> {
    const pathname = template.replace(/\{(\w+)\}/g, (_match, name: string) => encodeURIComponent(String(options.params?.[name])));
    const bearer = options.bearer === undefined ? key : options.bearer;
    const response = await fetch(`${prism.url}${pathname}`, {
      method,
      headers: {
        ...(bearer === null ? {} : { Authorization: `Bearer ${bearer}` }),
        ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const recorded: PrismCall = {
      operation: `${method} ${template.split('?')[0]}`,
      status: response.status,
      violations: response.headers.get('sl-violations'),
      requestId: response.headers.get('x-request-id'),
      body: await response.text(),
    };
    calls.push(recorded);
    return recorded;
  }

  /** The call answered `status` from the service, and Prism found it as the document says. */
  async function expectCall(status: number, method: string, template: string, options: Parameters<typeof call>[2] = {}): Promise<PrismCall> {
    const answered = await call(method, template, options);
    expect({ operation: answered.operation, status: answered.status, violations: answered.violations, fromService: answered.requestId?.startsWith('req_') }).toEqual({
      operation: answered.operation,
      status,
      violations: null,
      fromService: true,
    });
    return answered;
  }
  const json = (answered: PrismCall) => JSON.parse(answered.body);

  it('finds no violation in a run of every operation of the document, successes and error answers', async () => {
    const bogusKey = `svc_operator_test_${'a'.repeat(12)}_${'b'.repeat(43)}`;
    const readOnly = await tenant.key(['operator:tasks:read']);

    await expectCall(200, 'GET', '/whoami');
    await expectCall(401, 'GET', '/whoami', { bearer: bogusKey });
    await expectCall(200, 'GET', '/event_types');
    await expectCall(200, 'GET', '/audit');
    await expectCall(403, 'GET', '/audit', { bearer: readOnly });
    await expectCall(200, 'GET', '/usage');
    await expectCall(400, 'GET', '/devices?cursor=not-a-cursor');

    const id = json(await expectCall(201, 'POST', '/devices', { body: { space_id: tenant.spaceId, name: 'prism' } })).id as string;
    await expectCall(200, 'GET', '/devices');
    await expectCall(403, 'GET', '/devices', { bearer: readOnly });
    await expectCall(200, 'GET', '/devices/{id}', { params: { id } });
    await expectCall(404, 'GET', '/devices/{id}', { params: { id: 'dev_unknown' } });

    const task = json(await expectCall(202, 'POST', '/devices/{id}/tasks', { params: { id }, body: { prompt: 'return the title' } })).id as string;
    for (let status = ''; status !== 'succeeded'; ) {
      status = json(await expectCall(200, 'GET', '/tasks/{id}', { params: { id: task } })).status;
      expect(['running', 'succeeded']).toContain(status);
    }
    await expectCall(404, 'GET', '/tasks/{id}', { params: { id: 'task_unknown' } });
    await expectCall(200, 'GET', '/devices/{id}/tasks', { params: { id } });
    await expectCall(409, 'POST', '/tasks/{id}/cancel', { params: { id: task } });
    const stream = await expectCall(200, 'GET', '/tasks/{id}/events', { params: { id: task } });
    expect(stream.body).toContain('event: done\n');
    const seq = Number(/^id: (\d+)$/m.exec(stream.body)![1]);
    await expectCall(200, 'GET', '/tasks/{id}/recording', { params: { id: task } });
    await expectCall(206, 'GET', '/tasks/{id}/recording', { params: { id: task }, headers: { Range: 'bytes=0-99' } });
    await expectCall(416, 'GET', '/tasks/{id}/recording', { params: { id: task }, headers: { Range: 'bytes=999999999-' } });
    await expectCall(200, 'GET', '/tasks/{id}/steps/{seq}/screenshot', { params: { id: task, seq } });
    await expectCall(404, 'GET', '/tasks/{id}/steps/{seq}/screenshot', { params: { id: task, seq: 9999 } });
    await expectCall(200, 'GET', '/tasks/{id}/files', { params: { id: task } });
    await expectCall(404, 'GET', '/tasks/{id}/files/{file_id}', { params: { id: task, file_id: 'file_unknown' } });

    const session = json(await expectCall(201, 'POST', '/devices/{id}/sessions', { params: { id }, body: { mode: 'control' } })).id as string;
    await expectCall(200, 'GET', '/sessions/{id}', { params: { id: session } });
    await expectCall(409, 'POST', '/sessions/{id}/takeover', { params: { id: session }, body: {} });
    await expectCall(409, 'POST', '/sessions/{id}/release', { params: { id: session } });
    await expectCall(404, 'GET', '/sessions/{id}/recording', { params: { id: session } });
    await expectCall(204, 'DELETE', '/sessions/{id}', { params: { id: session } });

    const cdp = json(await expectCall(201, 'POST', '/devices/{id}/cdp', { params: { id }, body: {} })).id as string;
    await expectCall(404, 'GET', '/cdp_sessions/{id}/recording', { params: { id: cdp } });
    await expectCall(204, 'DELETE', '/cdp_sessions/{id}', { params: { id: cdp } });

    const endpoint = json(await expectCall(201, 'POST', '/webhook_endpoints', { body: { url: 'http://127.0.0.1:9/hook', event_types: ['operator.task.succeeded.v1'] } })).id as string;
    await expectCall(200, 'GET', '/webhook_endpoints');
    await expectCall(200, 'GET', '/webhook_endpoints/{id}', { params: { id: endpoint } });
    await expectCall(200, 'PATCH', '/webhook_endpoints/{id}', { params: { id: endpoint }, body: { enabled: false } });
    await expectCall(204, 'DELETE', '/webhook_endpoints/{id}', { params: { id: endpoint } });
    await expectCall(404, 'GET', '/webhook_endpoints/{id}', { params: { id: endpoint } });

    await expectCall(200, 'GET', '/task_caches');
    await expectCall(404, 'GET', '/task_caches/{id}', { params: { id: 'tch_unknown' } });
    await expectCall(404, 'DELETE', '/task_caches/{id}', { params: { id: 'tch_unknown' } });
    const credential = json(await expectCall(201, 'POST', '/credentials', { body: { name: 'prism', space_id: tenant.spaceId, domains: ['example.com'], username: 'ada', password: 'correct-horse-battery', totp_secret: 'JBSWY3DPEHPK3PXP' } })).id as string;
    await expectCall(409, 'POST', '/credentials', { body: { name: 'prism', space_id: tenant.spaceId, domains: ['example.com'] } });
    await expectCall(400, 'POST', '/credentials', { body: { name: 'prism-2', space_id: tenant.spaceId, domains: ['login.example.com'] } });
    await expectCall(200, 'GET', '/credentials');
    await expectCall(200, 'GET', '/credentials/{id}', { params: { id: credential } });
    await expectCall(200, 'PATCH', '/credentials/{id}', { params: { id: credential }, body: { password: 'rotated-horse-battery', notes: null } });
    await expectCall(201, 'POST', '/credentials/{id}/codes', { params: { id: credential }, body: { code: '123456' } });
    await expectCall(204, 'DELETE', '/credentials/{id}', { params: { id: credential } });
    await expectCall(404, 'GET', '/credentials/{id}', { params: { id: credential } });

    await expectCall(200, 'GET', '/escalations');
    await expectCall(404, 'GET', '/escalations/{id}', { params: { id: 'esc_unknown' } });
    await expectCall(401, 'POST', '/escalations/{id}/resolve', { params: { id: 'esc_unknown' }, bearer: 'esctok_unknown', body: { answer: 'yes' } });

    await expectCall(202, 'POST', '/devices/{id}/sleep', { params: { id } });
    for (let status = ''; status !== 'sleeping'; ) status = json(await expectCall(200, 'GET', '/devices/{id}', { params: { id } })).status;
    await expectCall(202, 'POST', '/devices/{id}/wake', { params: { id } });
    await expectCall(202, 'DELETE', '/devices/{id}', { params: { id } });
    await expectCall(410, 'POST', '/devices/{id}/tasks', { params: { id }, body: { prompt: 'return the title' } });

    const exercised = new Set(calls.map((answered) => answered.operation));
    expect(documentedRouteKeys(JSON.parse(documentText)).filter((operation) => !exercised.has(operation))).toEqual([]);
    expect(calls.filter((answered) => answered.violations !== null)).toEqual([]);
  }, 120_000);
});
