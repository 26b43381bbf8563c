import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The MCP server with the official SDK's client, over Streamable HTTP (/mcp on the service)
// and over stdio (`npm run mcp`, a client of the REST API), against the real service.

const ROOT = path.resolve(import.meta.dirname, '../..');
const TOOLS = ['create_device', 'list_devices', 'get_device', 'sleep_device', 'wake_device', 'delete_device', 'run_task', 'get_task', 'get_step_screenshot', 'cancel_task', 'list_escalations', 'answer_escalation'];

let test: TestService;
let tenant: TestTenant;
let pages: TaskPages;
let key: string;
const clients: Client[] = [];

beforeAll(async () => {
  pages = await startTaskPages();
  test = await startTestService({ OPERATOR_MAX_STREAMS_PER_KEY: '1' });
  tenant = await createTenant(test);
  key = await tenant.key(allScopes);
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

async function overHttp(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${test.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
  clients.push(client);
  return client;
}

async function overStdio(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'server/mcp/stdio.ts')],
      cwd: ROOT,
      env: { ...env, OPERATOR_API_KEY: apiKey, OPERATOR_BASE_URL: test.url },
      stderr: 'pipe',
    }),
  );
  clients.push(client);
  return client;
}

function json(result: unknown): any {
  const content = (result as CallToolResult).content[0];
  if (content?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(content.text);
}

/** get_step_screenshot answers the step's JPEG as an image block, the same bytes as the REST route. */
async function expectStepScreenshot(client: Client, taskId: string) {
  const result = (await client.callTool({ name: 'get_step_screenshot', arguments: { task_id: taskId, seq: 2 } })) as CallToolResult;
  expect(result.isError).toBeFalsy();
  const image = result.content[0];
  if (image?.type !== 'image') throw new Error('expected an image block');
  expect(image.mimeType).toBe('image/jpeg');
  const jpeg = Buffer.from(image.data, 'base64');
  expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
  const rest = await fetch(`${test.url}/v1/tasks/${taskId}/steps/2/screenshot`, { headers: { Authorization: `Bearer ${key}` } });
  expect(Buffer.from(await rest.arrayBuffer()).equals(jpeg)).toBe(true);
  const missing = await client.callTool({ name: 'get_step_screenshot', arguments: { task_id: taskId, seq: 999 } });
  expect(missing.isError).toBe(true);
  expect(json(missing).error.code).toBe('screenshot_not_found');
}

/** Another organization's task is the REST route's 404; a key without operator:tasks:read is 403. */
async function expectStepScreenshotGuarded(connect: (apiKey: string) => Promise<Client>, taskId: string) {
  const stranger = await connect(await (await createTenant(test)).key(allScopes));
  const foreign = await stranger.callTool({ name: 'get_step_screenshot', arguments: { task_id: taskId, seq: 1 } });
  expect(foreign.isError).toBe(true);
  expect(json(foreign).error.code).toBe('task_not_found');
  const unscoped = await connect(await tenant.key(['operator:devices:read']));
  const denied = await unscoped.callTool({ name: 'get_step_screenshot', arguments: { task_id: taskId, seq: 1 } });
  expect(denied.isError).toBe(true);
  expect(json(denied).error.code).toBe('insufficient_scope');
}

/** A finished task of the test's tenant, run over REST. */
async function finishedTask(): Promise<string> {
  const call = (method: string, route: string, body?: unknown) =>
    fetch(`${test.url}${route}`, { method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((response) => response.json() as Promise<any>);
  const device = await call('POST', '/v1/devices', { space_id: tenant.spaceId });
  const task = await call('POST', `/v1/devices/${device.id}/tasks`, { prompt: `go to ${pages.url('/plain')} then return the title` });
  const deadline = Date.now() + 60_000;
  while ((await call('GET', `/v1/tasks/${task.id}`)).status === 'running' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  await call('DELETE', `/v1/devices/${device.id}`);
  return task.id;
}

async function runTaskThroughTools(client: Client) {
  const device = json(await client.callTool({ name: 'create_device', arguments: { space_id: tenant.spaceId } }));
  expect(device).toMatchObject({ object: 'device', status: 'active' });
  const progress: Array<{ progress: number; message?: string }> = [];
  const prompt = `go to ${pages.url('/form')} then type "ada@example.com" into "Email" then click "Submit" then wait for "Welcome" then return the text of "#message"`;
  const result = await client.callTool({ name: 'run_task', arguments: { device_id: device.id, prompt } }, undefined, {
    onprogress: (notification) => progress.push(notification),
    timeout: 60_000,
  });
  expect(result.isError).toBeFalsy();
  const task = json(result);
  expect(task).toMatchObject({ object: 'task', status: 'succeeded', result: 'Welcome, ada@example.com' });
  expect(progress.length).toBeGreaterThan(3);
  expect(progress.map((item) => item.progress)).toEqual(progress.map((_, index) => index + 1));
  expect(progress[0]!.message).toContain('#1');
  expect(json(await client.callTool({ name: 'get_task', arguments: { task_id: task.id } }))).toMatchObject({ id: task.id, status: 'succeeded' });
  await expectStepScreenshot(client, task.id);
  const listed = json(await client.callTool({ name: 'list_devices', arguments: { limit: 10 } }));
  expect(listed.data.map((item: { id: string }) => item.id)).toContain(device.id);
  expect(json(await client.callTool({ name: 'sleep_device', arguments: { device_id: device.id } })).status).toBe('sleeping');
  expect(json(await client.callTool({ name: 'wake_device', arguments: { device_id: device.id } })).status).toBe('active');
  const late = await client.callTool({ name: 'cancel_task', arguments: { task_id: task.id } });
  expect(late.isError).toBe(true);
  expect(json(late).error.code).toBe('task_not_cancelable');
  expect(json(await client.callTool({ name: 'delete_device', arguments: { device_id: device.id } })).status).toBe('terminated');
}

describe('MCP over Streamable HTTP at /mcp', () => {
  it('lists the tools with REST field names in their input schemas', async () => {
    const client = await overHttp(key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS].sort());
    const runTask = tools.find((tool) => tool.name === 'run_task')!;
    expect(Object.keys(runTask.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['device_id', 'prompt', 'allowed_domains', 'max_steps', 'cache_key']));
    expect(runTask.inputSchema.required).toEqual(expect.arrayContaining(['device_id', 'prompt']));
    // A tool that is one /v1 operation is its declaration: the summary, the input, the path's id named for its resource.
    const document = await (await fetch(`${test.url}/v1/openapi.json`)).json();
    const tool = (name: string) => tools.find((candidate) => candidate.name === name)!;
    expect(tool('sleep_device').description).toBe(document.paths['/devices/{id}/sleep'].post.summary);
    expect(tool('sleep_device').inputSchema).toMatchObject({ properties: { device_id: { type: 'string' } }, required: ['device_id'] });
    expect(tool('cancel_task').description).toBe(document.paths['/tasks/{id}/cancel'].post.summary);
    const createBody = document.paths['/devices'].post.requestBody.content['application/json'].schema;
    const createSchema = createBody.$ref === undefined ? createBody : document.components.schemas[createBody.$ref.split('/').pop()];
    expect(Object.keys(tool('create_device').inputSchema.properties ?? {}).sort()).toEqual(Object.keys(createSchema.properties).sort());
    expect(tool('list_escalations').description).toBe(`${document.paths['/escalations'].get.summary} (next_cursor "" means no further page)`);
    expect(tool('list_escalations').inputSchema.properties).toMatchObject({ limit: { type: 'integer' }, status: {}, task_id: {} });
  });

  it('runs a task, streaming its steps as progress notifications', async () => {
    await runTaskThroughTools(await overHttp(key));
  });

  it('refuses an unknown key with 401, and applies scopes and tenancy as the REST API does', async () => {
    const refused = await fetch(`${test.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: 'Bearer svc_operator_test_aaaaaaaaaaaa_nope', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"$/);
    expect((await refused.json()).error.code).toBe('invalid_api_key');
    await expect(overHttp('svc_operator_test_aaaaaaaaaaaa_nope')).rejects.toThrow();

    const readOnly = await overHttp(await tenant.key(['operator:devices:read']));
    const denied = await readOnly.callTool({ name: 'create_device', arguments: { space_id: tenant.spaceId } });
    expect(denied.isError).toBe(true);
    expect(json(denied).error.code).toBe('insufficient_scope');

    const device = json(await (await overHttp(key)).callTool({ name: 'create_device', arguments: { space_id: tenant.spaceId } }));
    const stranger = await overHttp(await (await createTenant(test)).key(allScopes));
    const foreign = await stranger.callTool({ name: 'get_device', arguments: { device_id: device.id } });
    expect(json(foreign).error.code).toBe('device_not_found');
    const invalid = await stranger.callTool({ name: 'create_device', arguments: { idle_suspend_secs: 5 } });
    expect(invalid.isError).toBe(true);
    await (await overHttp(key)).callTool({ name: 'delete_device', arguments: { device_id: device.id } });
  });

  it('answers run_task with the running task after wait_secs, and holds one of the key’s stream slots while it follows', async () => {
    const streamKey = await tenant.key(allScopes);
    const client = await overHttp(streamKey);
    const device = json(await client.callTool({ name: 'create_device', arguments: { space_id: tenant.spaceId } }));
    const parked = json(await client.callTool({ name: 'run_task', arguments: { device_id: device.id, prompt: `go to ${pages.url('/plain')} then ask a human "Which one?"`, wait_secs: 2 } }));
    expect(parked.object).toBe('task');
    expect(['running', 'needs_human']).toContain(parked.status);

    // The key's one stream slot (OPERATOR_MAX_STREAMS_PER_KEY=1) held by an event stream:
    // run_task is refused before it submits anything.
    const holder = new AbortController();
    const stream = await fetch(`${test.url}/v1/tasks/${parked.id}/events`, { headers: { Authorization: `Bearer ${streamKey}` }, signal: holder.signal });
    expect(stream.status).toBe(200);
    const other = json(await client.callTool({ name: 'create_device', arguments: { space_id: tenant.spaceId } }));
    const refused = await client.callTool({ name: 'run_task', arguments: { device_id: other.id, prompt: `go to ${pages.url('/plain')} then return the title` } });
    expect(refused.isError).toBe(true);
    expect(json(refused).error.code).toBe('too_many_streams');
    expect(json(await client.callTool({ name: 'get_device', arguments: { device_id: other.id } })).current_task_id).toBeNull();
    holder.abort();
    for (const id of [device.id, other.id]) await client.callTool({ name: 'delete_device', arguments: { device_id: id } });
  });

  it("refuses get_step_screenshot for another organization's task and without operator:tasks:read", async () => {
    await expectStepScreenshotGuarded(overHttp, await finishedTask());
  });

  it('declares only what it does (no listChanged: it is stateless) and puts a request id on every error', async () => {
    const client = await overHttp(key);
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
    const failed = await client.callTool({ name: 'get_device', arguments: { device_id: 'dev_nope' } });
    expect(json(failed).error).toMatchObject({ code: 'device_not_found', request_id: expect.stringMatching(/^req_/) });
    const malformed = await client.callTool({ name: 'get_device', arguments: { device_id: 7 } });
    expect(malformed.isError).toBe(true);
    expect(json(malformed).error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('device_id'), request_id: expect.stringMatching(/^req_/) });
    const unknownMethod = await fetch(`${test.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list' }),
    });
    const body = JSON.parse((await unknownMethod.text()).replace(/^event: message\ndata: /, ''));
    expect(body.error).toMatchObject({ code: -32601, data: { request_id: unknownMethod.headers.get('x-request-id') } });
  });

  it('answers GET with 405 (the server is stateless)', async () => {
    const response = await fetch(`${test.url}/mcp`, { headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' } });
    expect(response.status).toBe(405);
    expect((await response.json()).error.code).toBe('method_not_allowed');
  });
});

describe('MCP over stdio (npm run mcp)', () => {
  it('lists the tools and runs a task through the REST API', async () => {
    const client = await overStdio(key);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([...TOOLS].sort());
    await runTaskThroughTools(client);
  });

  it("refuses get_step_screenshot for another organization's task and without operator:tasks:read", async () => {
    await expectStepScreenshotGuarded(overStdio, await finishedTask());
  });

  it('answers every tool call of an unknown key with invalid_api_key', async () => {
    const client = await overStdio('svc_operator_test_aaaaaaaaaaaa_nope');
    const refused = await client.callTool({ name: 'list_devices', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(json(refused).error).toMatchObject({ code: 'invalid_api_key', request_id: expect.stringMatching(/^req_/) });
  });
});
