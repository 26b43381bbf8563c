import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answerEscalationAsOperator } from '../../server/domain/console/answer-escalation';
import { DeviceTracker } from '../support/device-tracker';
import { expireEscalationNow } from '../support/escalation-clock';
import { SECRET, startShopPages, type ShopPages } from '../support/shop-pages';
import { apiClient, type ApiCall } from '../support/http';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// Typed escalations and structured results end to end on the offline planner: real server,
// PostgreSQL, Chromium, an escalation destination and a webhook receiver.

// Long enough for a resolve after a server restart on a loaded machine; the expiry test
// brings its escalations' expiry forward rather than wait it out.
const TTL_SECS = 20;

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let key: string;
let destination: WebhookReceiver;
let webhooks: WebhookReceiver;
let pages: ShopPages;
let pageBase: string;
const logLines: string[] = [];
const devices = new DeviceTracker(() => api);

beforeAll(async () => {
  pages = await startShopPages();
  pageBase = pages.base;
  destination = await startWebhookReceiver((res) => res.writeHead(200).end());
  webhooks = await startWebhookReceiver((res) => res.writeHead(200).end());
  test = await startTestService(
    { OPERATOR_ESCALATION_TTL_SECS: String(TTL_SECS), OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '100', OPERATOR_LOG_LEVEL: 'trace' },
    { logDestination: { write: (line) => void logLines.push(line) } },
  );
  tenant = await createTenant(test, { escalationUrl: destination.url });
  key = await tenant.key([
    'operator:devices:read',
    'operator:devices:write',
    'operator:tasks:read',
    'operator:tasks:write',
    'operator:escalations:read',
    'operator:audit:read',
    'operator:webhooks:write',
  ]);
  api = apiClient(test.url, key);
  expect((await api('POST', '/v1/webhook_endpoints', { url: webhooks.url })).status).toBe(201);
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await destination?.close();
  await webhooks?.close();
  await pages?.close();
});

async function submit(body: Record<string, unknown>): Promise<{ task: string; device: string }> {
  const device = await devices.create(tenant.spaceId);
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
  return { task: submitted.body.id, device };
}

/** Submits, waits for the task to park, and returns the escalation as the destination received it. */
async function park(body: Record<string, unknown>): Promise<{ task: string; escalation: any; resolve: (answer: unknown) => Promise<any>; token: string }> {
  const { task } = await submit(body);
  await waitForTaskEnd(api, task, 30_000, ['needs_human']);
  const deliveryOf = () =>
    destination.received.map((received) => JSON.parse(received.rawBody.toString('utf8'))).find((delivery) => delivery.escalation.task_id === task);
  await expect.poll(deliveryOf, { timeout: 15_000 }).toBeDefined();
  const delivery = deliveryOf();
  const resolve = (payload: unknown) => apiClient(test.url, delivery.token)('POST', `/v1/escalations/${delivery.escalation.id}/resolve`, payload);
  return { task, escalation: delivery.escalation, resolve, token: delivery.token };
}

async function steps(task: string): Promise<any[]> {
  const { frames } = await readStream(`${test.url}/v1/tasks/${task}/events`, key, {});
  return frames.filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!));
}

describe('structured results (offline planner)', () => {
  it('refuses an invalid or oversized output_schema with 400 param output_schema, creating nothing', async () => {
    const device = await devices.create(tenant.spaceId);
    for (const output_schema of [{ type: 'object', $ref: 'https://example.com/s.json' }, { type: 'string', pattern: 'a+' }, { type: 'object', description: 'x'.repeat(16 * 1024) }, { type: 'nope' }]) {
      const refused = await api('POST', `/v1/devices/${device}/tasks`, { prompt: 'return the title', output_schema });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_request', param: 'output_schema' });
    }
    expect((await api('GET', `/v1/devices/${device}/tasks`)).body.data).toEqual([]);
  });

  it('succeeds with a return json that matches the schema, echoing the schema on the task', async () => {
    const output_schema = {
      type: 'object',
      properties: { name: { type: 'string' }, price: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } }, title: { type: 'string' } },
      required: ['name', 'price', 'tags', 'title'],
      additionalProperties: false,
    };
    const { task } = await submit({
      prompt: `go to ${pageBase}/shop then return json {"name": the text of "h1", "price": the number in ".price", "tags": the texts of "li", "title": the title}`,
      output_schema,
    });
    const ended = await waitForTaskEnd(api, task, 30_000);
    expect(ended).toMatchObject({ status: 'succeeded', result: { name: 'Blue kettle', price: 1234.5, tags: ['steel', 'blue'], title: 'Shop' }, output_schema });
  });

  it('fails with output_invalid and the fixed detail when the result does not match', async () => {
    const { task } = await submit({ prompt: `go to ${pageBase}/shop then return the title`, output_schema: { type: 'object' } });
    expect((await waitForTaskEnd(api, task, 30_000)).result).toEqual({ error: 'output_invalid', detail: "The task's result did not match its output_schema." });
  });
});

describe('typed escalations (offline planner)', () => {
  it('choice: shows kind, options, answer_schema, expiry; refuses an answer outside the options (400, stays open) on every path', async () => {
    const { task, escalation, resolve } = await park({ prompt: `go to ${pageBase}/shop then ask a human to choose between "Red" and "Blue" then return the title` });
    expect(escalation).toMatchObject({
      kind: 'choice',
      options: ['Red', 'Blue'],
      multiple: false,
      fields: null,
      answer_schema: { type: 'string', enum: ['Red', 'Blue'] },
      on_timeout: 'fail',
      status: 'pending',
    });
    expect(Date.parse(escalation.expires_at) - Date.parse(escalation.created_at)).toBe(TTL_SECS * 1000);
    const created = webhooks.received.map((received) => JSON.parse(received.rawBody.toString('utf8'))).find((event) => event.type === 'operator.escalation.created.v1' && event.data.object.id === escalation.id);
    expect(created?.data.object).toMatchObject({ kind: 'choice', options: ['Red', 'Blue'], expires_at: escalation.expires_at });

    const wrong = await resolve({ answer: 'Green' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({ code: 'invalid_request', param: 'answer' });
    await expect(answerEscalationAsOperator(test.service.services, { id: 'op', name: 'ops' }, { id: escalation.id, answer: 'Green', cleared: true })).rejects.toMatchObject({ apiCode: 'invalid_request', param: 'answer' });
    expect((await api('GET', `/v1/escalations/${escalation.id}`)).body.status).toBe('pending');

    expect((await resolve({ answer: 'Blue' })).body).toMatchObject({ applied: true, status: 'resolved' });
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'Shop' });
    expect((await api('GET', `/v1/escalations/${escalation.id}`)).body.answer).toBe('Blue');
    expect((await steps(task)).map((step) => [step.action, step.note])).toContainEqual(['human_answer', 'Chosen: "Blue"']);
  });

  it('confirm_before: stops before the matching click with a confirm, and clicks after a yes', async () => {
    const { task, escalation, resolve } = await park({
      prompt: `go to ${pageBase}/shop then click "Buy now" then return the text of "#status"`,
      confirm_before: ['buy'],
    });
    expect(escalation).toMatchObject({ kind: 'confirm', answer_schema: { type: 'boolean' }, reason: 'Confirm before the agent continues: click "Buy now"', on_timeout: 'fail' });
    expect((await resolve({ answer: 'yes' })).status).toBe(400);
    expect((await resolve({ answer: true })).body.applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'Bought', confirm_before: ['buy'] });
  });

  it('confirm: a no fails the task with confirmation_declined and nothing is clicked', async () => {
    const { task, resolve } = await park({ prompt: `go to ${pageBase}/shop then ask a human to confirm "Buy the kettle?" then click "Buy now"` });
    expect((await resolve({ answer: false })).body.applied).toBe(true);
    expect((await waitForTaskEnd(api, task, 30_000)).result).toEqual({ error: 'confirmation_declined', detail: 'A human declined to confirm an action the task needed to take.' });
    expect((await steps(task)).some((step) => step.action?.startsWith('click'))).toBe(false);
  });

  it('takeover: resolving with no answer hands the page back and the task goes on', async () => {
    const { task, escalation, resolve } = await park({ prompt: `go to ${pageBase}/shop then ask a human to take over "Solve the puzzle" then return the title` });
    expect(escalation).toMatchObject({ kind: 'takeover', reason: 'Solve the puzzle', answer_schema: { type: 'string' } });
    expect((await resolve({})).body.applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'Shop' });
  });

  it('expiry: on_timeout fail ends the task with escalation_expired; continue resumes it without an answer', async () => {
    const [failing, going] = await Promise.all([
      park({ prompt: `go to ${pageBase}/shop then ask a human "Anyone?" then return the title` }),
      park({ prompt: `go to ${pageBase}/shop then ask a human "Anyone?" then return the title`, escalation_on_timeout: 'continue' }),
    ]);
    expect(failing.escalation.on_timeout).toBe('fail');
    expect(going.escalation.on_timeout).toBe('continue');
    await Promise.all([failing, going].map(({ escalation }) => expireEscalationNow(test.service.services.db, escalation.id)));
    const [failed, continued] = await Promise.all([waitForTaskEnd(api, failing.task, 30_000), waitForTaskEnd(api, going.task, 30_000)]);
    expect(failed.result).toEqual({ error: 'escalation_expired', detail: 'No human answered the request for help before it expired.' });
    expect(continued).toMatchObject({ status: 'succeeded', result: 'Shop', escalation_on_timeout: 'continue' });
    expect((await steps(going.task)).map((step) => step.action)).toContain('human_no_answer');
    expect((await api('GET', `/v1/escalations/${going.escalation.id}`)).body.status).toBe('expired');
  }, 120_000);

  it('credentials: the secret is typed masked and found nowhere afterwards (tables, stream, webhooks, GETs, audit, logs)', async () => {
    const { task, escalation, resolve } = await park({
      prompt: `go to ${pageBase}/login then ask a human for "otp" then type "{{otp}}" into "#code" then click "Send" then return the text of "#result"`,
    });
    expect(escalation).toMatchObject({
      kind: 'credentials',
      fields: [{ name: 'otp', secret: true }],
      answer_schema: { type: 'object', required: ['otp'], additionalProperties: false },
    });
    expect((await resolve({ answer: { otp: SECRET, extra: 'x' } })).body.error).toMatchObject({ param: 'answer' });
    expect((await resolve({ answer: { otp: SECRET } })).body.applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'Code accepted, masked' });
    expect((await api('GET', `/v1/escalations/${escalation.id}`)).body.answer).toEqual({ otp: '********' });

    const found: string[] = [];
    const db = test.service.services.db;
    const tables = await db.execute<{ name: string }>(sql`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`);
    expect(tables.length).toBeGreaterThan(10);
    for (const { name } of tables) {
      const rows = await db.execute<{ row: string }>(sql`select t::text as row from ${sql.identifier(name)} t`);
      if (rows.some(({ row }) => row.includes(SECRET))) found.push(`table ${name}`);
    }
    const stream = await readStream(`${test.url}/v1/tasks/${task}/events`, key, {});
    if (stream.body.includes(SECRET)) found.push('event stream');
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_000)); // let the webhook deliveries land
    if (webhooks.received.some((received) => received.rawBody.toString('utf8').includes(SECRET))) found.push('webhooks');
    if (destination.received.some((received) => received.rawBody.toString('utf8').includes(SECRET))) found.push('escalation destination');
    for (const path of [`/v1/escalations/${escalation.id}`, `/v1/escalations?task_id=${task}`, `/v1/audit?limit=100`, `/v1/tasks/${task}`]) {
      if (JSON.stringify((await api('GET', path)).body).includes(SECRET)) found.push(path);
    }
    expect(logLines.length).toBeGreaterThan(0);
    if (logLines.some((line) => line.includes(SECRET))) found.push('logs');
    expect(found).toEqual([]);
  });

  it('credentials across a server restart: a pending credentials escalation is answered after it and the resumed task types the value', async () => {
    const { task, resolve } = await park({
      prompt: `go to ${pageBase}/login then ask a human for "otp" then type "{{otp}}" into "#code" then click "Send" then return the text of "#result"`,
    });
    await test.restart();
    expect((await resolve({ answer: { otp: SECRET } })).body.applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 45_000)).toMatchObject({ status: 'succeeded', result: 'Code accepted, masked' });
    const [left] = await test.service.services.db.execute<{ count: number }>(sql`select count(*)::int as count from escalations where sealed_answer is not null`);
    expect(left!.count).toBe(0);
  });
});
