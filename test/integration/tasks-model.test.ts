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

  it('fails cleanly with planner_error on a reply without a tool call or with broken arguments, leaking nothing', async () => {
    model.push({ text: 'I would rather not use tools. Internal trace: stack at secret.js:42' });
    const noTool = await waitForTaskEnd(api, await submitToNewDevice('Do something.'));
    expect(noTool.status).toBe('failed');
    expect(noTool.result).toEqual({ error: 'planner_error', detail: 'The planner could not decide the next step of the task.' });

    model.push({ toolCalls: [{ name: 'navigate', arguments: '{"url": ' }] });
    const broken = await waitForTaskEnd(api, await submitToNewDevice('Do something else.'));
    expect(broken.result).toEqual({ error: 'planner_error', detail: 'The planner could not decide the next step of the task.' });
    expect(JSON.stringify(broken)).not.toContain('secret.js');
  });

  it('meters the tasks and steps above in the usage report', async () => {
    const usage = await api('GET', '/v1/usage');
    expect(usage.status).toBe(200);
    // Three tasks: five steps for the completed one, one `failed planner_error` message each for the others.
    expect(usage.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'task', resource: 'task', unit: 'count', quantity: 3 }),
        expect.objectContaining({ kind: 'step', resource: 'task', unit: 'count', quantity: 7 }),
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
