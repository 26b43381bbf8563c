import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/service-process';
import { waitForTaskEnd } from '../support/task-helpers';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, type ApiCall } from '../support/http';
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
  }, 60_000);
});
