import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escalations } from '../../db/schema';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '../support/scripted-openai-server';
import { resolveEscalation } from '../../server/domain/escalations/resolve-escalation';
import { parsePublicId } from '../../server/domain/ids';
import { apiClient, type ApiCall } from '../support/http';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { createTenant, startTestService, type TestService } from '../support/test-service';

// The task worker on the model planner, configured through OPERATOR_MODEL_* against a
// scripted OpenAI-compatible endpoint served by the test.

let test: TestService;
let pages: TaskPages;
let model: ScriptedOpenAiServer;
let api: ApiCall;
let key: string;
let spaceId: string;

beforeAll(async () => {
  pages = await startTaskPages();
  model = await startScriptedOpenAiServer();
  test = await startTestService({
    OPERATOR_MODEL_BASE_URL: model.baseUrl,
    OPERATOR_MODEL_API_KEY: 'sk-scripted-test',
    OPERATOR_MODEL: 'scripted-model',
    OPERATOR_PRICE_INPUT_TOKEN_MICRO: '2',
    OPERATOR_PRICE_OUTPUT_TOKEN_MICRO: '3',
  });
  const tenant = await createTenant(test);
  spaceId = tenant.spaceId;
  key = await tenant.key(['operator:devices:write', 'operator:devices:read', 'operator:tasks:read', 'operator:tasks:write', 'operator:usage:read']);
  api = apiClient(test.url, key);
});
afterAll(async () => {
  await test?.stop();
  await model?.close();
  await pages?.close();
});

async function submitToNewDevice(prompt: string): Promise<string> {
  const device = await api('POST', '/v1/devices', { space_id: spaceId });
  expect(device.status).toBe(201);
  const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt, allowed_domains: ['127.0.0.1'] });
  expect(submitted.status).toBe(202);
  return submitted.body.id;
}

describe('tasks on the model planner', () => {
  it('completes a task by the tool calls the model chose, sending it the prompt, the page and the tools', async () => {
    const before = model.requests.length;
    model.push(
      { toolCalls: [{ name: 'navigate', arguments: { url: pages.url('/form'), reason: 'Open the form.' } }] },
      { toolCalls: [{ name: 'type', arguments: { text: 'grace@example.com', target: 'Email' } }] },
      { toolCalls: [{ name: 'click', arguments: { target: 'Submit' } }] },
      { toolCalls: [{ name: 'extract_text', arguments: { selector: '#message' } }] },
    );
    const taskId = await submitToNewDevice('Sign up to the newsletter as grace@example.com and tell me what the page says.');
    const task = await waitForTaskEnd(api, taskId);
    expect(task).toMatchObject({ status: 'succeeded', result: 'Welcome, grace@example.com' });
    expect(task.usage).toEqual({ steps: 5, model_calls: 4, input_tokens: 40, output_tokens: 20, replayed_steps: 0 });

    const sent = model.requests.slice(before);
    expect(sent).toHaveLength(4);
    for (const request of sent) {
      expect(request.authorization).toBe('Bearer sk-scripted-test');
      expect(request.body.model).toBe('scripted-model');
      expect(request.body.tools?.map((tool) => tool.function.name)).toEqual(
        expect.arrayContaining(['navigate', 'click', 'type', 'wait_for_text', 'extract_text', 'finish', 'ask_human']),
      );
      expect(JSON.stringify(request.body.messages)).toContain('Sign up to the newsletter as grace@example.com');
    }
    // The observation of the form page (its textbox) went into the request after navigating.
    expect(sent[1]!.body.messages.at(-1)?.content).toContain('textbox "Email"');
    const steps = (await readStream(`${test.url}/v1/tasks/${taskId}/events`, key)).frames
      .filter((frame) => frame.event === 'step')
      .map((frame) => JSON.parse(frame.data!));
    expect(steps.map((step) => step.action)).toEqual([
      `navigate ${pages.url('/form')}`,
      'type "grace@example.com" into "Email"',
      'click "Submit"',
      'extract text of "#message"',
      'answer',
    ]);
    expect(steps[0].note).toBe('Open the form.');
  });

  it('sends a bad reply back to the model with a fixed correction, and goes on when the next one is good', async () => {
    model.push(
      { text: 'I would rather not use tools. Internal trace: stack at secret.js:42' },
      { toolCalls: [{ name: 'finish', arguments: { answer: 'done after all' } }] },
    );
    const taskId = await submitToNewDevice('Do something.');
    const task = await waitForTaskEnd(api, taskId);
    expect(task).toMatchObject({ status: 'succeeded', result: 'done after all' });
    // The scripted endpoint reports 10 input and 5 output tokens per reply.
    expect(task.usage).toEqual({ steps: 2, model_calls: 2, input_tokens: 20, output_tokens: 10, replayed_steps: 0 });
    const steps = (await readStream(`${test.url}/v1/tasks/${taskId}/events`, key)).frames
      .filter((frame) => frame.event === 'step')
      .map((frame) => JSON.parse(frame.data!));
    expect(steps.map((step) => [step.type, step.action])).toEqual([
      ['correction', 'correction no_tool_call'],
      ['message', 'answer'],
    ]);
    expect(JSON.stringify(steps)).not.toContain('secret.js');
  });

  it('fails with planner_error at the fourth bad reply in a row, leaking nothing', async () => {
    model.push(
      { toolCalls: [{ name: 'navigate', arguments: '{"url": ' }] },
      { toolCalls: [{ name: 'teleport', arguments: {} }] },
      { toolCalls: [{ name: 'scroll', arguments: { direction: 'down' } }, { name: 'scroll', arguments: { direction: 'up' } }] },
      { text: 'Internal trace: stack at secret.js:42' },
    );
    const taskId = await submitToNewDevice('Do something else.');
    const broken = await waitForTaskEnd(api, taskId);
    expect(broken.result).toEqual({ error: 'planner_error', detail: 'The planner could not decide the next step of the task.' });
    expect(broken.usage).toEqual({ steps: 4, model_calls: 4, input_tokens: 40, output_tokens: 20, replayed_steps: 0 });
    expect(JSON.stringify(broken)).not.toContain('secret.js');
  });

  it('fails a model that repeats one action on an unchanged page with agent_loop, before max_steps', async () => {
    const scroll = { toolCalls: [{ name: 'scroll', arguments: { direction: 'down' } }] };
    model.push({ toolCalls: [{ name: 'navigate', arguments: { url: pages.url('/form') } }] }, scroll, scroll, scroll, scroll);
    const device = await api('POST', '/v1/devices', { space_id: spaceId });
    const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, {
      prompt: 'Read everything.',
      allowed_domains: ['127.0.0.1'],
      max_steps: 10,
    });
    const task = await waitForTaskEnd(api, submitted.body.id);
    expect(task.result).toEqual({ error: 'agent_loop', detail: 'The model kept repeating the same action on an unchanged page.' });
    // navigate, three scrolls, the warning, the failure.
    expect(task.usage).toMatchObject({ steps: 6, model_calls: 5 });
  });

  it('meters the tasks, steps and model tokens above in the usage report, priced', async () => {
    const usage = await api('GET', '/v1/usage');
    expect(usage.status).toBe(200);
    // Four tasks: 5 + 2 + 4 + 6 steps, 4 + 2 + 4 + 5 model replies of 10 input and 5 output tokens.
    expect(usage.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'task', resource: 'task', unit: 'count', quantity: 4 }),
        expect.objectContaining({ kind: 'step', resource: 'task', unit: 'count', quantity: 17 }),
        { kind: 'operator.model.input_tokens', resource: 'task', unit: 'token', window: 'rolling_24h', quantity: 150, cost_micro: 300 },
        { kind: 'operator.model.output_tokens', resource: 'task', unit: 'token', window: 'rolling_24h', quantity: 75, cost_micro: 225 },
      ]),
    );
  });

  // After the usage figures above, which count the tasks before it.
  it('opens an escalation of the kind the model asked for, and shows the model the human’s answer', async () => {
    model.push({ toolCalls: [{ name: 'ask_human', arguments: { question: 'Please solve the captcha on the form.', kind: 'captcha' } }] });
    const taskId = await submitToNewDevice('Sign up.');
    await waitForTaskEnd(api, taskId, 20_000, ['needs_human']);
    const db = test.service.services.db;
    const [escalation] = await db.select().from(escalations).where(eq(escalations.taskId, parsePublicId('task', taskId)!));
    expect(escalation).toMatchObject({ kind: 'captcha', reason: 'Please solve the captcha on the form.', status: 'pending' });

    const before = model.requests.length;
    model.push({ toolCalls: [{ name: 'finish', arguments: { answer: 'signed up' } }] });
    await resolveEscalation(test.service.services, escalation!, { answer: 'Solved it, go on.' }, { requestId: null, via: 'console' });
    expect(await waitForTaskEnd(api, taskId)).toMatchObject({ status: 'succeeded', result: 'signed up' });
    expect(model.requests[before]!.body.messages.at(-1)?.content).toContain('human_answer: (Solved it, go on.)');
  });
});
