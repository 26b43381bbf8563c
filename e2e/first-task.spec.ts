import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from './support/test';
import { admin } from './admin-cli';

// The README's journey, end to end against the running service: an operator mints a key
// with the admin CLI; a client creates a device, submits a task in the offline language
// against a page it serves, streams the steps and gets the result.

const FORM_PAGE = `<!doctype html><title>Greeter</title>
<label for="name">Name</label><input id="name" />
<button onclick="document.getElementById('greeting').textContent = 'Hello, ' + document.getElementById('name').value">Send</button>
<p id="greeting"></p>`;

let site: Server;
let siteUrl: string;

test.beforeAll(async () => {
  site = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(FORM_PAGE);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
});
test.afterAll(async () => {
  await new Promise((resolve) => site.close(resolve));
});

test('a new user runs a first task and watches its steps stream', async ({ request }) => {
  const { org_id: orgId } = admin('org:create', '--name', 'E2E');
  const { space_id: spaceId } = admin('space:create', '--org', orgId, '--name', 'default');
  const { key } = admin('key:create', '--org', orgId, '--scopes', 'operator:devices:read,operator:devices:write,operator:tasks:read,operator:tasks:write');
  const headers = { Authorization: `Bearer ${key}` };
  const base = process.env.E2E_BASE_URL!;

  const whoami = await request.get(`${base}/v1/whoami`, { headers });
  expect((await whoami.json()).org_id).toBe(orgId);

  const device = await request.post(`${base}/v1/devices`, { headers, data: { space_id: spaceId, name: 'first' } });
  expect(device.status()).toBe(201);
  const deviceId = (await device.json()).id;

  const prompt = `go to ${siteUrl} then type "Ada" into "Name" then click "Send" then wait for "Hello, Ada" then return the text of "#greeting"`;
  const submitted = await request.post(`${base}/v1/devices/${deviceId}/tasks`, { headers, data: { prompt } });
  expect(submitted.status()).toBe(202);
  const taskId = (await submitted.json()).id;

  const stream = await fetch(`${base}/v1/tasks/${taskId}/events`, { headers });
  expect(stream.headers.get('content-type')).toContain('text/event-stream');
  const text = await stream.text();
  expect(text).toContain('event: step');
  const done = /event: done\ndata: (.*)\n/.exec(text);
  expect(done).not.toBeNull();
  const task = JSON.parse(done![1]!);
  expect(task).toMatchObject({ id: taskId, status: 'succeeded', result: 'Hello, Ada' });

  const deleted = await request.delete(`${base}/v1/devices/${deviceId}`, { headers });
  expect(deleted.status()).toBe(202);
});
