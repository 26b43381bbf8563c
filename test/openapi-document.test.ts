import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { eventCatalogue } from '../server/domain/events/catalogue';
import { routeCatalogue } from './support/route-catalogue';
import { OPENAPI_PATH, ROOT, SCHEMA_PATH, openApiText, schemaText } from '../scripts/sdk-artifacts';

// The OpenAPI document as code generates it: linted, complete, and the SDK's checked-in
// copy and generated types current (`npm run sdk:generate` rewrites them).

const run = promisify(execFile);
const documentText = openApiText();
const document = JSON.parse(documentText);
const scratch = await mkdtemp(path.join(tmpdir(), 'openapi-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('the OpenAPI document', () => {
  it('passes redocly lint (recommended rules) with no errors', async () => {
    const file = path.join(scratch, 'openapi.json');
    await writeFile(file, documentText);
    const result = await run(path.join(ROOT, 'node_modules', '.bin', 'redocly'), ['lint', file, '--format=json'], { cwd: scratch }).catch((error: { stdout: string; code: number }) => error);
    const report = JSON.parse(result.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('names every resource, request body and list, and the error body', () => {
    const names = Object.keys(document.components.schemas);
    for (const name of ['Device', 'Task', 'Step', 'Session', 'SessionWithToken', 'Escalation', 'WebhookEndpoint', 'WebhookEndpointWithSecret', 'AuditEvent', 'Usage', 'Whoami', 'Error', 'DeviceList', 'TaskList', 'EscalationList', 'AuditEventList', 'CreateDeviceRequest', 'SubmitTaskRequest', 'TaskEvent', 'EventEnvelope']) {
      expect(names).toContain(name);
    }
    expect(document.paths['/devices/{id}'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Device' });
    expect(document.paths['/devices'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateDeviceRequest' });
    expect(names.filter((name) => name.startsWith('__') || name.startsWith('error.'))).toEqual([]);
  });

  it('lists each status a route answers, with its codes, derived from the guard, the path and the domain', () => {
    const create = document.paths['/devices'].post;
    expect(Object.keys(create.responses)).toEqual(['201', '400', '401', '403', '409', '410', '413', '415', '429', '500', '503']);
    expect(create.responses['403'].description).toContain('`insufficient_scope`');
    expect(create.responses['403'].description).toContain('`product_not_entitled`');
    expect(create.responses['403'].description).toContain('`device_quota_exceeded`');
    expect(create.responses['429'].headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    expect(create.responses['201'].headers['RateLimit-Remaining']).toBeDefined();
    expect(create.parameters.map((parameter: { name: string }) => parameter.name)).toContain('Idempotency-Key');

    const getDevice = document.paths['/devices/{id}'].get;
    expect(getDevice.responses['404'].description).toContain('`device_not_found`');
    expect(getDevice.responses['403'].description).not.toContain('product_not_entitled');
    expect(getDevice.parameters.map((parameter: { name: string }) => parameter.name)).not.toContain('Idempotency-Key');
    expect(document.paths['/whoami'].get.responses['403']).toBeUndefined();
    expect(document.paths['/devices'].get.responses['400'].description).toContain('`invalid_cursor`');
    expect(document.paths['/tasks/{id}/cancel'].post.responses['409'].description).toContain('`task_not_cancelable`');

    const resolve = document.paths['/escalations/{id}/resolve'].post;
    expect(resolve.security).toEqual([{ escalationBearer: [] }]);
    expect(resolve.responses['401'].description).toContain('`invalid_escalation_token`');
    expect(resolve.responses['404']).toBeUndefined();
    expect(resolve.responses['429'].headers['RateLimit-Limit']).toBeUndefined();
    for (const [route, methods] of Object.entries(document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        expect({ route, method, has500: '500' in operation.responses, noDefault: !('default' in operation.responses) }).toEqual({ route, method, has500: true, noDefault: true });
      }
    }
  });

  it('agrees with the route catalogue the integration tests check against the server (401, 403 per scope, 404 per id kind)', () => {
    for (const route of routeCatalogue) {
      const responses = document.paths[route.path][route.method.toLowerCase()].responses as Record<string, { description: string }>;
      const documented = (status: string) => responses[status]?.description ?? '';
      const label = `${route.method} ${route.path}`;
      expect({ label, auth: documented('401').includes(route.escalationBearer ? '`invalid_escalation_token`' : '`invalid_api_key`') }).toEqual({ label, auth: true });
      expect({ label, scope: documented('403').includes('`insufficient_scope`') }).toEqual({ label, scope: route.scopes.length > 0 });
      if (route.idKind !== undefined && route.escalationBearer === undefined) {
        expect({ label, notFound: documented('404').includes(`\`${route.idKind.notFound}\``) }).toEqual({ label, notFound: true });
      }
    }
  });

  it('describes the event stream frames and every deliverable webhook with its signature header', () => {
    // On the wire the stream is text; its frames are described in words and, parsed, as TaskEvent.
    const stream = document.paths['/tasks/{id}/events'].get.responses['200'];
    expect(stream.content).toEqual({ 'text/event-stream': { schema: { type: 'string' }, example: expect.stringContaining('event: step\n') } });
    for (const part of ['`id: <seq>`', '`event: step`', '`event: done`', '`: keep-alive`', '`after_seq`', '`TaskEvent`']) expect(stream.description).toContain(part);
    expect(document.paths['/tasks/{id}/events'].get.responses['429'].description).toContain('`too_many_streams`');
    const deliverable = eventCatalogue.filter((entry) => entry.deliverable).map((entry) => entry.type);
    expect(Object.keys(document.webhooks).filter((name) => name !== 'escalation.delivery').sort()).toEqual([...deliverable].sort());
    const succeeded = document.webhooks['operator.task.succeeded.v1'].post;
    expect(succeeded.parameters.map((parameter: { name: string }) => parameter.name)).toContain('X-Service-Signature');
    expect(JSON.stringify(succeeded.requestBody)).toContain('#/components/schemas/Task');
  });

  it('is the copy checked in for the SDK, and the SDK types are generated from it', async () => {
    expect(await readFile(OPENAPI_PATH, 'utf8'), 'sdk/openapi.json is stale: run npm run sdk:generate').toBe(documentText);
    expect(await readFile(SCHEMA_PATH, 'utf8'), 'sdk/src/generated/schema.ts is stale: run npm run sdk:generate').toBe(await schemaText(documentText));
  });
});
