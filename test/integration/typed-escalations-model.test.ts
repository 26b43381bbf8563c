import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answerEscalationAsOperator } from '../../server/domain/console/answer-escalation';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '../support/scripted-openai-server';
import { SECRET, startShopPages, type ShopPages } from '../support/shop-pages';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// Structured results and typed escalations on the model planner, against a scripted
// OpenAI-compatible endpoint: the schema as the finish tool's parameters, a violating reply
// corrected, asks as tools, confirm_before enforced by the runner, and credentials the
// model never sees.

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let key: string;
let model: ScriptedOpenAiServer;
let pages: ShopPages;
const devices = new DeviceTracker(() => api);
const OPERATOR = { id: 'op_1', name: 'ops' };

beforeAll(async () => {
  pages = await startShopPages();
  model = await startScriptedOpenAiServer();
  test = await startTestService({
    OPERATOR_MODEL_BASE_URL: model.baseUrl,
    OPERATOR_MODEL_API_KEY: 'sk-scripted-test',
    OPERATOR_MODEL: 'scripted-model',
    OPERATOR_MODEL_MAX_CORRECTIONS: '1',
  });
  tenant = await createTenant(test);
  key = await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:escalations:read']);
  api = apiClient(test.url, key);
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await model?.close();
  await pages?.close();
});

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

async function submit(body: Record<string, unknown>): Promise<string> {
  const device = await devices.create(tenant.spaceId);
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
  return submitted.body.id;
}

/** Waits for the task to park and returns its pending escalation. */
async function parked(task: string): Promise<any> {
  await waitForTaskEnd(api, task, 30_000, ['needs_human']);
  const listed = await api('GET', `/v1/escalations?task_id=${task}&status=pending`);
  expect(listed.body.data).toHaveLength(1);
  return listed.body.data[0];
}

async function steps(task: string): Promise<any[]> {
  const { frames } = await readStream(`${test.url}/v1/tasks/${task}/events`, key);
  return frames.filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!));
}

const answer = (id: string, value: any) => answerEscalationAsOperator(test.service.services, OPERATOR, { id, answer: value, cleared: true });

describe('structured results on the model planner', () => {
  const output_schema = { type: 'object', properties: { name: { type: 'string' }, price: { type: 'number' } }, required: ['name', 'price'], additionalProperties: false };

  it('gives the model the schema as the finish tool’s parameters, corrects a violating answer, and succeeds with a matching one', async () => {
    const before = model.requests.length;
    model.push(call('navigate', { url: `${pages.base}/shop` }), call('finish', { answer: { name: 'Blue kettle', price: '1234.50' } }), call('finish', { answer: { name: 'Blue kettle', price: 1234.5 } }));
    const task = await submit({ prompt: 'What does the kettle cost?', output_schema });
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: { name: 'Blue kettle', price: 1234.5 } });
    const first = model.requests[before]!.body;
    const finish = first.tools?.find((tool) => tool.function.name === 'finish') as any;
    expect(finish.function.parameters.properties.answer).toEqual(output_schema);
    expect(JSON.stringify(first.messages)).toContain('Finish with an answer that matches this JSON Schema');
    expect((await steps(task)).map((step) => step.action)).toContain('correction output_invalid');
  });

  it('fails with output_invalid once the corrections are used up', async () => {
    model.push(call('finish', { answer: { name: 1 } }), call('finish', { answer: 'just text' }));
    const task = await submit({ prompt: 'What does the kettle cost?', output_schema });
    expect((await waitForTaskEnd(api, task, 30_000)).result).toEqual({ error: 'output_invalid', detail: "The task's result did not match its output_schema." });
  });
});

describe('typed escalations on the model planner', () => {
  it('a confirm the model asks for before a consequential click covers that click (no second stop)', async () => {
    model.push(
      call('navigate', { url: `${pages.base}/shop` }),
      call('ask_human_confirm', { question: 'Buy the blue kettle for $1,234.50?' }),
      call('click', { target: 'Buy now' }),
      call('extract_text', { selector: '#status' }),
    );
    const task = await submit({ prompt: 'Buy the kettle.', confirm_before: ['Buy now'] });
    const escalation = await parked(task);
    expect(escalation).toMatchObject({ kind: 'confirm', reason: 'Buy the blue kettle for $1,234.50?', answer_schema: { type: 'boolean' } });
    expect((await answer(escalation.id, true)).applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'Bought' });
    expect((await api('GET', `/v1/escalations?task_id=${task}`)).body.data).toHaveLength(1);
  });

  it('the runner stops a consequential click the model did not have confirmed, and carries it out after a yes', async () => {
    const before = model.requests.length;
    model.push(call('navigate', { url: `${pages.base}/shop` }), call('click', { target: 'Buy now' }), call('click', { target: 'Buy now' }), call('extract_text', { selector: '#status' }));
    const task = await submit({ prompt: 'Buy the kettle.', confirm_before: ['buy'] });
    const escalation = await parked(task);
    expect(escalation).toMatchObject({ kind: 'confirm', reason: 'Confirm before the agent continues: click "Buy now"' });
    expect(JSON.stringify(model.requests[before]!.body.messages)).toContain('Call ask_human_confirm before any step that involves: \\"buy\\"');
    expect((await answer(escalation.id, true)).applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'Bought' });
  });

  it('choice with several options: the model sees what was chosen', async () => {
    const before = model.requests.length;
    model.push(call('ask_human_choice', { question: 'Which colours?', options: ['Red', 'Blue', 'Green'], multiple: true }), call('finish', { answer: 'ok' }));
    const task = await submit({ prompt: 'Ask which colours.' });
    const escalation = await parked(task);
    expect(escalation).toMatchObject({ kind: 'choice', options: ['Red', 'Blue', 'Green'], multiple: true, answer_schema: { type: 'array', minItems: 1 } });
    await expect(answer(escalation.id, ['Red', 'Purple'])).rejects.toMatchObject({ apiCode: 'invalid_request', param: 'answer' });
    expect((await answer(escalation.id, ['Red', 'Blue'])).applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'ok' });
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).toContain('Chosen: \\"Red\\", \\"Blue\\"');
    expect(model.requests.length - before).toBe(2);
  });

  it('credentials: the model types a placeholder, the page gets the value masked, and the model never sees it', async () => {
    const before = model.requests.length;
    model.push(
      call('navigate', { url: `${pages.base}/login` }),
      call('ask_human_credentials', { question: 'What is the one-time code?', fields: ['otp'] }),
      call('type', { text: '{{otp}}', target: '#code' }),
      call('click', { target: 'Send' }),
      call('extract_text', { selector: '#result' }),
    );
    const task = await submit({ prompt: 'Sign in.' });
    const escalation = await parked(task);
    expect(escalation).toMatchObject({ kind: 'credentials', fields: [{ name: 'otp', secret: true }] });
    expect((await answer(escalation.id, { otp: SECRET })).applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'Code accepted, masked' });
    const sent = JSON.stringify(model.requests.slice(before).map((request) => request.body));
    expect(sent).toContain('type it as {{otp}}');
    expect(sent).not.toContain(SECRET);
    expect(JSON.stringify(await steps(task))).not.toContain(SECRET);
  });

  it('takeover: the model hands the page to a human and goes on after', async () => {
    model.push(call('ask_human_takeover', { question: 'Please solve the puzzle.' }), call('finish', { answer: 'done' }));
    const task = await submit({ prompt: 'Get past the puzzle.' });
    const escalation = await parked(task);
    expect(escalation).toMatchObject({ kind: 'takeover', answer_schema: { type: 'string' } });
    expect((await answer(escalation.id, '')).applied).toBe(true);
    expect(await waitForTaskEnd(api, task, 30_000)).toMatchObject({ status: 'succeeded', result: 'done' });
  });
});
