import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answerEscalationAsOperator } from '../../server/domain/console/answer-escalation';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer, type ScriptedReply } from '../support/scripted-openai-server';
import { SECRET, startShopPages, type ShopPages } from '../support/shop-pages';
import { startSignupPages, type SignupPages } from '../support/signup-pages';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The replay cache on the model planner (issue 27), against the scripted OpenAI-compatible
// endpoint: a miss pays the model, a hit on a fresh device replays with no model call, a
// page that changed heals with the model and updates the entry, a page that lost its form
// fails and leaves the entry as it was, and a credential is never stored.

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let key: string;
let model: ScriptedOpenAiServer;
let signup: SignupPages;
let shop: ShopPages;
const devices = new DeviceTracker(() => api);
const OPERATOR = { id: 'op_1', name: 'ops' };

// A model that takes its time, as real ones do: what a hit saves is visible in the durations,
// beyond what a loaded 2-core host adds to one run over another (300 ms a call was not).
const THINKING_MS = 1_000;
const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({ toolCalls: [{ name, arguments: args }], delayMs: THINKING_MS });

const PROMPT = 'Sign up to the newsletter as grace@example.com and tell me what the page says.';
const RESULT = 'Welcome, grace@example.com';

beforeAll(async () => {
  signup = await startSignupPages();
  shop = await startShopPages();
  model = await startScriptedOpenAiServer();
  test = await startTestService({ OPERATOR_MODEL_BASE_URL: model.baseUrl, OPERATOR_MODEL_API_KEY: 'sk-scripted-test', OPERATOR_MODEL: 'scripted-model' });
  tenant = await createTenant(test);
  key = await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:escalations:read']);
  api = apiClient(test.url, key);
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await model?.close();
  await signup?.close();
  await shop?.close();
});

/** Submits on a fresh device (a new browser: nothing of an earlier run's page is left). */
async function submit(body: Record<string, unknown>): Promise<string> {
  const device = await devices.create(tenant.spaceId);
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
  return submitted.body.id;
}

async function steps(task: string): Promise<any[]> {
  const { frames } = await readStream(`${test.url}/v1/tasks/${task}/events`, key);
  return frames.filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!));
}

async function entry(cacheKey: string): Promise<any> {
  const listed = await api('GET', `/v1/task_caches?space_id=${tenant.spaceId}`);
  expect(listed.status).toBe(200);
  return listed.body.data.find((item: any) => item.key === cacheKey);
}

const durationMs = (task: any) => Date.parse(task.finished_at) - Date.parse(task.created_at);

describe('the replay cache on the model planner', () => {
  const cache_key = 'newsletter.signup';
  let missDuration = 0;

  it('a first run with a key is a miss: the model plans every step, and the success is stored', async () => {
    signup.variant = 'original';
    const before = model.requests.length;
    model.push(
      call('navigate', { url: `${signup.base}/signup`, reason: 'Open the form.' }),
      call('type', { text: 'grace@example.com', target: 'Email' }),
      call('click', { target: 'Subscribe' }),
      call('extract_text', { selector: '#message' }),
    );
    const task = await waitForTaskEnd(api, await submit({ prompt: PROMPT, cache_key }));
    expect(task).toMatchObject({ status: 'succeeded', result: RESULT, cache: { key: cache_key, outcome: 'miss' } });
    expect(task.usage).toMatchObject({ model_calls: 4, replayed_steps: 0 });
    expect(model.requests.length - before).toBe(4);
    missDuration = durationMs(task);

    const stored = await entry(cache_key);
    expect(stored).toMatchObject({ object: 'task_cache', key: cache_key, space_id: tenant.spaceId, prompt: PROMPT, hits: 0, heals: 0, last_used_at: null });
    expect(stored.id).toMatch(/^tch_[0-9a-f-]{36}$/);
    expect(stored.steps.map((step: any) => step.action.kind)).toEqual(['navigate', 'type', 'click', 'extract']);
    // Targets are fingerprints, not a ref or a CSS path alone.
    expect(stored.steps[1].action.into).toMatchObject({ tag: 'input', role: 'textbox', name: 'Email', label: 'Email', attributes: { name: 'email', type: 'email' } });
    expect(stored.steps[2].action.target).toMatchObject({ tag: 'button', role: 'button', name: 'Subscribe', text: 'Subscribe', attributes: { type: 'submit' } });
    expect(stored.steps[2].action.target.path).toContain('form:nth-of-type(1)>button:nth-of-type(1)');
    expect(stored.steps[1].action.text).toBe('grace@example.com');
  });

  it('a second run on a fresh device is a hit: no model call, the same result, faster, every step replayed', async () => {
    const before = model.requests.length;
    const id = await submit({ prompt: PROMPT, cache_key });
    const task = await waitForTaskEnd(api, id);
    expect(task).toMatchObject({ status: 'succeeded', result: RESULT, cache: { key: cache_key, outcome: 'hit' } });
    expect(task.usage).toMatchObject({ model_calls: 0, input_tokens: 0, replayed_steps: 4 });
    expect(model.requests.length).toBe(before);
    expect(durationMs(task)).toBeLessThan(missDuration);
    const recorded = await steps(id);
    expect(recorded.filter((step) => step.type === 'action').every((step) => step.replayed === true)).toBe(true);
    expect(recorded.find((step) => step.action === 'answer').replayed).toBe(false);
    expect(recorded[0].action).toBe(`navigate ${signup.base}/signup`);
    expect(await entry(cache_key)).toMatchObject({ hits: 1, heals: 0, last_used_at: expect.any(String) });
  });

  it('with the button renamed and moved the replay heals with the model, succeeds and updates the entry', async () => {
    signup.variant = 'renamed';
    const previous = await entry(cache_key);
    const before = model.requests.length;
    model.push(call('click', { target: 'Sign me up' }), call('extract_text', { selector: '#message' }));
    const id = await submit({ prompt: PROMPT, cache_key });
    const task = await waitForTaskEnd(api, id);
    expect(task).toMatchObject({ status: 'succeeded', result: RESULT, cache: { key: cache_key, outcome: 'healed' } });
    expect(task.usage).toMatchObject({ model_calls: 2, replayed_steps: 2 });
    // The model was told what the entry did and where it stopped fitting the page.
    const healing = JSON.stringify(model.requests[before]!.body.messages);
    expect(healing).toContain('An earlier run of this task succeeded');
    expect(healing).toContain('click \\"Subscribe\\"');
    const recorded = (await steps(id)).filter((step) => step.type === 'action');
    expect(recorded.map((step) => step.replayed)).toEqual([true, true, false, false]);

    const healed = await entry(cache_key);
    expect(healed).toMatchObject({ id: previous.id, hits: 1, heals: 1 });
    expect(healed.updated_at > previous.updated_at).toBe(true);
    expect(healed.steps[2].action.target).toMatchObject({ name: 'Sign me up' });
  });

  it('a fourth run replays the healed entry: a hit again with no model call', async () => {
    const before = model.requests.length;
    const task = await waitForTaskEnd(api, await submit({ prompt: PROMPT, cache_key }));
    expect(task).toMatchObject({ status: 'succeeded', result: RESULT, cache: { outcome: 'hit' } });
    expect(task.usage).toMatchObject({ model_calls: 0, replayed_steps: 4 });
    expect(model.requests.length).toBe(before);
  });

  it('a page whose form is gone fails the task cleanly, and the entry stays as it was', async () => {
    signup.variant = 'gone';
    const previous = await entry(cache_key);
    // Four places to type that are not there: three corrections, then the task fails.
    model.push(...['Email', 'E-mail', '#email', 'input[name=email]'].map((target) => call('type', { text: 'grace@example.com', target })));
    const task = await waitForTaskEnd(api, await submit({ prompt: PROMPT, cache_key }));
    expect(task).toMatchObject({ status: 'failed', cache: { outcome: 'healed' }, result: { error: 'element_not_found' } });
    expect(task.usage).toMatchObject({ model_calls: 4, replayed_steps: 1 });
    expect(await entry(cache_key)).toEqual(previous);
  });

  it('a different prompt with the key is a miss, and its success replaces the entry', async () => {
    signup.variant = 'original';
    const previous = await entry(cache_key);
    model.push(call('navigate', { url: `${signup.base}/signup` }), call('extract_title', {}));
    const task = await waitForTaskEnd(api, await submit({ prompt: 'What is the sign-up page called?', cache_key }));
    expect(task).toMatchObject({ status: 'succeeded', result: 'Newsletter', cache: { outcome: 'miss' }, usage: { model_calls: 2 } });
    const replaced = await entry(cache_key);
    expect(replaced).toMatchObject({ id: previous.id, prompt: 'What is the sign-up page called?' });
    expect(replaced.steps.map((step: any) => step.action.kind)).toEqual(['navigate', 'extract']);
  });

  it('a credential from an escalation is stored as its placeholder, asked afresh at replay, and never lands in the database', async () => {
    const login = { prompt: 'Sign in with the one-time code.', cache_key: 'shop.login' };
    model.push(
      call('navigate', { url: `${shop.base}/login` }),
      call('ask_human_credentials', { question: 'What is the one-time code?', fields: ['otp'] }),
      call('type', { text: '{{otp}}', target: '#code' }),
      call('click', { target: 'Send' }),
      call('extract_text', { selector: '#result' }),
    );
    const first = await submit(login);
    await answerWhenParked(first);
    expect(await waitForTaskEnd(api, first)).toMatchObject({ status: 'succeeded', result: 'Code accepted, masked', cache: { outcome: 'miss' } });
    const stored = await entry('shop.login');
    expect(stored.steps[2].action).toMatchObject({ kind: 'type', text: '{{otp}}' });

    const before = model.requests.length;
    const second = await submit(login);
    await answerWhenParked(second);
    const replayed = await waitForTaskEnd(api, second);
    expect(replayed).toMatchObject({ status: 'succeeded', result: 'Code accepted, masked', cache: { outcome: 'hit' }, usage: { model_calls: 0, replayed_steps: 5 } });
    expect(model.requests.length).toBe(before);

    // Every row of every table, as text: the code typed twice is in none of them.
    const sql = postgres(test.database.url, { max: 1, onnotice: () => {} });
    try {
      const tables = await sql<{ name: string }[]>`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
      expect(tables.map((table) => table.name)).toContain('task_caches');
      for (const { name } of tables) {
        const [found] = await sql.unsafe(`select count(*)::int as n from "${name}" as t where t::text like $1`, [`%${SECRET}%`]);
        expect(found!.n, `table ${name}`).toBe(0);
      }
    } finally {
      await sql.end();
    }
  });
});

/** Waits for the task to ask for the code and answers it as an operator. */
async function answerWhenParked(task: string): Promise<void> {
  await waitForTaskEnd(api, task, 30_000, ['needs_human']);
  const listed = await api('GET', `/v1/escalations?task_id=${task}&status=pending`);
  expect(listed.body.data).toHaveLength(1);
  expect(listed.body.data[0]).toMatchObject({ kind: 'credentials' });
  const answered = await answerEscalationAsOperator(test.service.services, OPERATOR, { id: listed.body.data[0].id, answer: { otp: SECRET }, cleared: true });
  expect(answered.applied).toBe(true);
}
