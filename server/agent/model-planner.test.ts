import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAILURE_DETAILS } from './failures';
import { createModelPlanner, type ModelPlannerOptions } from './model-planner';
import { runAgent, type RunAgentInput } from './run-agent';
import type { NewStep } from './step';
import { FakePageDriver } from '../../test/support/fake-page-driver';
import { startScriptedOpenAiServer, type RecordedChatRequest, type ScriptedOpenAiServer, type ScriptedReply } from '../../test/support/scripted-openai-server';

const FORM = 'http://127.0.0.1:4000/form';
const API_KEY = 'sk-test-0123456789';
const MODEL = 'scripted-model-1';

let server: ScriptedOpenAiServer;
beforeEach(async () => {
  server = await startScriptedOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

function formDriver(): FakePageDriver {
  const driver = new FakePageDriver({
    [FORM]: {
      title: 'Sign up',
      elements: [
        { ref: 1, role: 'textbox', name: 'Email', tag: 'input', value: '' },
        { ref: 2, role: 'button', name: 'Submit', tag: 'button' },
      ],
      texts: { '#message': 'Welcome back' },
    },
  });
  driver.url = FORM;
  return driver;
}

async function run(
  prompt: string,
  options: Partial<ModelPlannerOptions> = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<{ outcome: Awaited<ReturnType<typeof runAgent>>; steps: NewStep[]; driver: FakePageDriver }> {
  const driver = formDriver();
  const steps: NewStep[] = [];
  const input: RunAgentInput = {
    task: { id: 'task_1', prompt, maxSteps: null, allowedDomains: null },
    driver,
    planner: createModelPlanner({ baseUrl: server.baseUrl, apiKey: API_KEY, model: MODEL, maxRetries: 0, ...options }),
    history: [],
    recordStep: async (step) => {
      steps.push(step);
    },
    signal,
    deadline: Date.now() + 30_000,
  };
  return { outcome: await runAgent(input), steps, driver };
}

function userText(request: RecordedChatRequest | undefined): string {
  const user = request?.body.messages.find((message) => message.role === 'user');
  const content = user?.content;
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => part.text ?? '').join('\n');
}

describe('model planner against a scripted OpenAI-compatible server', () => {
  it('sends the task, observation and history with every tool, and carries out the calls', async () => {
    server.push(
      { toolCalls: [{ name: 'type', arguments: { text: 'ada@example.com', target: 1, reason: 'Fill in the email' } }] },
      { toolCalls: [{ name: 'click', arguments: { target: 2 } }] },
      { toolCalls: [{ name: 'finish', arguments: { answer: 'Signed up as ada@example.com' } }] },
    );

    const { outcome, steps, driver } = await run('Sign up with ada@example.com');

    expect(outcome).toEqual({ status: 'succeeded', result: 'Signed up as ada@example.com' });
    expect(driver.calls.filter((call) => call.method === 'type' || call.method === 'click')).toEqual([
      { method: 'type', args: ['ada@example.com', { ref: 1 }] },
      { method: 'click', args: [{ ref: 2 }] },
    ]);
    expect(steps).toEqual([
      { type: 'action', action: 'type "ada@example.com" into ref=1 (textbox "Email")', url: FORM, title: 'Sign up', note: 'Fill in the email' },
      { type: 'action', action: 'click ref=2 (button "Submit")', url: FORM, title: 'Sign up', note: null },
      { type: 'message', action: 'answer', url: FORM, title: 'Sign up', note: 'Signed up as ada@example.com' },
    ]);

    expect(server.requests).toHaveLength(3);
    const [first, second] = server.requests;
    expect(first?.path).toBe('/v1/chat/completions');
    expect(first?.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first?.body.model).toBe(MODEL);
    expect(first?.body.tool_choice).toBe('required');
    expect(first?.body.tools?.map((entry) => entry.function.name).sort()).toEqual(
      ['ask_human', 'click', 'extract_text', 'extract_title', 'extract_url', 'finish', 'navigate', 'press', 'scroll', 'type', 'wait_for_text'],
    );
    expect(first?.body.messages[0]).toMatchObject({ role: 'system' });
    const firstText = userText(first);
    expect(firstText).toContain('Task: Sign up with ada@example.com');
    expect(firstText).toContain(`URL: ${FORM}`);
    expect(firstText).toContain('Title: Sign up');
    expect(firstText).toContain('[1] textbox "Email" value=""');
    expect(firstText).toContain('[2] button "Submit"');
    expect(firstText).toContain('Steps so far:\n(none)');
    expect(userText(second)).toContain('1. action: type "ada@example.com" into ref=1 (textbox "Email"): (Fill in the email)');
  });

  it('ends with the text an extract_text call reads', async () => {
    server.push({ toolCalls: [{ name: 'extract_text', arguments: { selector: '#message' } }] });
    const { outcome, steps } = await run('What does the page say?');
    expect(outcome).toEqual({ status: 'succeeded', result: 'Welcome back' });
    expect(steps.map((step) => step.action)).toEqual(['extract text of "#message"', 'answer']);
  });

  it('parks at needs_human on ask_human', async () => {
    server.push({ toolCalls: [{ name: 'ask_human', arguments: { question: 'Which plan should I pick?' } }] });
    const { outcome } = await run('Pick a plan');
    expect(outcome).toEqual({ status: 'needs_human', question: 'Which plan should I pick?', kind: 'question' });
  });

  it('passes on the kind of help the model asks for', async () => {
    server.push({ toolCalls: [{ name: 'ask_human', arguments: { question: 'Please solve the captcha', kind: 'captcha' } }] });
    expect((await run('Sign up')).outcome).toEqual({ status: 'needs_human', question: 'Please solve the captcha', kind: 'captcha' });
    server.push({ toolCalls: [{ name: 'ask_human', arguments: { question: 'Anything?', kind: 'magic' } }] });
    expect((await run('Sign up')).outcome).toMatchObject({ status: 'failed', error: 'planner_error' });
  });

  it('navigates to http(s) URLs the model gives, adding https:// to a bare host', async () => {
    server.push(
      { toolCalls: [{ name: 'navigate', arguments: { url: 'example.com/pricing' } }] },
      { toolCalls: [{ name: 'finish', arguments: { answer: 'ok' } }] },
    );
    const { driver } = await run('Open the pricing page');
    expect(driver.calls.find((call) => call.method === 'navigate')?.args).toEqual(['https://example.com/pricing']);
  });

  it('sends the screenshot as an image when asked to', async () => {
    server.push({ toolCalls: [{ name: 'finish', arguments: { answer: 'seen' } }] });
    await run('Look at the page', { screenshots: true });
    const content = server.requests[0]?.body.messages.find((message) => message.role === 'user')?.content;
    expect(Array.isArray(content) && content.map((part) => part.type)).toEqual(['text', 'image_url']);
  });

  it('cancels promptly while the model is still answering', async () => {
    server.push({ toolCalls: [{ name: 'finish', arguments: { answer: 'late' } }], delayMs: 5_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const { outcome } = await run('Anything', {}, controller.signal);
    expect(outcome).toEqual({ status: 'canceled' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('model planner: a bad model reply fails the task with planner_error and leaks nothing', () => {
  const LEAK = 'upstream-secret-detail';

  const badReplies: Array<[string, ScriptedReply]> = [
    ['arguments that are not JSON', { toolCalls: [{ name: 'click', arguments: `{"target": 2, ${LEAK}` }] }],
    ['an unknown tool', { toolCalls: [{ name: `delete_everything_${LEAK}`, arguments: {} }] }],
    ['arguments that break the schema', { toolCalls: [{ name: 'scroll', arguments: { direction: `sideways ${LEAK}` } }] }],
    ['a non-http URL', { toolCalls: [{ name: 'navigate', arguments: { url: `file:///etc/${LEAK}` } }] }],
    ['two tool calls at once', { toolCalls: [{ name: 'scroll', arguments: { direction: 'down' } }, { name: 'finish', arguments: { answer: LEAK } }] }],
    ['text instead of a tool call', { text: `I think the answer is ${LEAK}` }],
    ['HTTP 500', { status: 500, body: JSON.stringify({ error: { message: LEAK } }) }],
    ['HTTP 401', { status: 401, body: JSON.stringify({ error: { message: LEAK } }) }],
    ['a body that is not JSON', { status: 200, body: `<html>${LEAK}</html>` }],
  ];

  it.each(badReplies)('%s', async (_, reply) => {
    server.push(reply);
    const { outcome, steps, driver } = await run('Do the thing');
    expect(outcome).toEqual({ status: 'failed', error: 'planner_error' });
    expect(steps).toEqual([
      { type: 'message', action: 'failed planner_error', url: FORM, title: 'Sign up', note: FAILURE_DETAILS.planner_error },
    ]);
    expect(JSON.stringify({ outcome, steps })).not.toContain(LEAK);
    expect(driver.methods).toEqual(['setAllowedDomains', 'observe']);
  });
});
