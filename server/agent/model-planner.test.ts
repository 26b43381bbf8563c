import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActionError } from '../browser/types';
import { CORRECTION_TEXTS, type CorrectionReason } from './correction';
import { FAILURE_DETAILS } from './failures';
import type { ModelCallUsage } from './model-usage';
import { estimateTokens } from './token-estimate';
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
  driver: FakePageDriver = formDriver(),
): Promise<{ outcome: Awaited<ReturnType<typeof runAgent>>; steps: NewStep[]; driver: FakePageDriver; modelCalls: ModelCallUsage[] }> {
  const steps: NewStep[] = [];
  const modelCalls: ModelCallUsage[] = [];
  const input: RunAgentInput = {
    task: { id: 'task_1', prompt, maxSteps: null, allowedDomains: null, output: null, confirmBefore: null },
    driver,
    planner: createModelPlanner({ baseUrl: server.baseUrl, apiKey: API_KEY, model: MODEL, maxRetries: 0, ...options }),
    history: [],
    recordStep: async (step) => {
      steps.push(step);
    },
    recordModelCall: async (usage) => {
      modelCalls.push(usage);
    },
    signal,
    deadline: Date.now() + 30_000,
  };
  return { outcome: await runAgent(input), steps, driver, modelCalls };
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
      ['ask_human', 'ask_human_choice', 'ask_human_confirm', 'ask_human_credentials', 'ask_human_takeover', 'click', 'download', 'extract_text', 'extract_title', 'extract_url', 'fill_credential', 'finish', 'navigate', 'press', 'scroll', 'type', 'wait_for_text'],
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

  it('maps the download tool to a download of its target (which fails where the run keeps no downloads)', async () => {
    server.push({ toolCalls: [{ name: 'download', arguments: { target: '#report' } }] });
    const { outcome, steps } = await run('Get the report');
    expect(outcome).toEqual({ status: 'failed', error: 'download_failed' });
    expect(steps.map((step) => step.action)).toEqual(['failed download_failed']);
  });

  it('parks at needs_human on ask_human', async () => {
    server.push({ toolCalls: [{ name: 'ask_human', arguments: { question: 'Which plan should I pick?' } }] });
    const { outcome } = await run('Pick a plan');
    expect(outcome).toEqual({ status: 'needs_human', question: 'Which plan should I pick?', help: 'question' });
  });

  it('passes on the kind of help the model asks for', async () => {
    server.push({ toolCalls: [{ name: 'ask_human', arguments: { question: 'Please solve the captcha', kind: 'captcha' } }] });
    expect((await run('Sign up')).outcome).toEqual({ status: 'needs_human', question: 'Please solve the captcha', help: 'captcha' });
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

describe('model planner: a bad model reply is sent back for another try, and leaks nothing', () => {
  const LEAK = 'upstream-secret-detail';

  const badReplies: Array<[string, ScriptedReply, CorrectionReason]> = [
    ['arguments that are not JSON', { toolCalls: [{ name: 'click', arguments: `{"target": 2, ${LEAK}` }] }, 'invalid_arguments'],
    ['an unknown tool', { toolCalls: [{ name: `delete_everything_${LEAK}`, arguments: {} }] }, 'unknown_tool'],
    ['arguments that break the schema', { toolCalls: [{ name: 'scroll', arguments: { direction: `sideways ${LEAK}` } }] }, 'invalid_arguments'],
    ['a non-http URL', { toolCalls: [{ name: 'navigate', arguments: { url: `file:///etc/${LEAK}` } }] }, 'invalid_arguments'],
    [
      'two tool calls at once',
      { toolCalls: [{ name: 'scroll', arguments: { direction: 'down' } }, { name: 'finish', arguments: { answer: LEAK } }] },
      'several_tool_calls',
    ],
    ['text instead of a tool call', { text: `I think the answer is ${LEAK}` }, 'no_tool_call'],
  ];

  it.each(badReplies)('%s, then a good reply: one correction step, and the task succeeds', async (_, reply, reason) => {
    server.push(reply, { toolCalls: [{ name: 'finish', arguments: { answer: 'done' } }] });
    const { outcome, steps, driver } = await run('Do the thing');
    expect(outcome).toEqual({ status: 'succeeded', result: 'done' });
    expect(steps).toEqual([
      { type: 'correction', action: `correction ${reason}`, url: FORM, title: 'Sign up', note: CORRECTION_TEXTS[reason] },
      { type: 'message', action: 'answer', url: FORM, title: 'Sign up', note: 'done' },
    ]);
    expect(JSON.stringify({ outcome, steps })).not.toContain(LEAK);
    // The model was told what was wrong, in the fixed words, and nothing was done on the page.
    expect(userText(server.requests[1])).toContain(CORRECTION_TEXTS[reason]);
    expect(JSON.stringify(server.requests[1]?.body)).not.toContain(LEAK);
    expect(driver.methods).toEqual(['setAllowedDomains', 'observe']);
  });

  it('fails with planner_error at the fourth bad reply in a row, after three corrections', async () => {
    server.push(
      { text: 'no' },
      { toolCalls: [{ name: 'nope', arguments: {} }] },
      { toolCalls: [{ name: 'click', arguments: '{' }] },
      { text: `still no ${LEAK}` },
      { toolCalls: [{ name: 'finish', arguments: { answer: 'too late' } }] },
    );
    const { outcome, steps, modelCalls } = await run('Do the thing');
    expect(outcome).toEqual({ status: 'failed', error: 'planner_error' });
    // Every reply is counted with the tokens the endpoint reported, the rejected ones too.
    expect(modelCalls).toEqual(Array.from({ length: 4 }, () => ({ inputTokens: 10, outputTokens: 5 })));
    expect(steps.map((step) => step.action)).toEqual([
      'correction no_tool_call',
      'correction unknown_tool',
      'correction invalid_arguments',
      'failed planner_error',
    ]);
    expect(server.requests).toHaveLength(4);
  });

  it('fails at the first bad reply with OPERATOR_MODEL_MAX_CORRECTIONS=0', async () => {
    server.push({ text: 'no' });
    const { outcome, steps } = await run('Do the thing', { maxCorrections: 0 });
    expect(outcome).toEqual({ status: 'failed', error: 'planner_error' });
    expect(steps.map((step) => step.action)).toEqual(['failed planner_error']);
  });

  it('sends an element that was not found back to the model, and the good replies in between reset the count', async () => {
    server.push(
      { toolCalls: [{ name: 'click', arguments: { target: 'Missing button' } }] },
      { toolCalls: [{ name: 'click', arguments: { target: 2 } }] },
      { toolCalls: [{ name: 'finish', arguments: { answer: 'clicked' } }] },
    );
    const driver = formDriver();
    driver.failNext('click', new ActionError('target_not_found', `no element ${LEAK}`));
    const { outcome, steps } = await run('Click submit', {}, undefined, driver);
    expect(outcome).toEqual({ status: 'succeeded', result: 'clicked' });
    expect(steps.map((step) => [step.type, step.action])).toEqual([
      ['correction', 'correction element_not_found'],
      ['action', 'click ref=2 (button "Submit")'],
      ['message', 'answer'],
    ]);
    expect(userText(server.requests[1])).toContain(CORRECTION_TEXTS.element_not_found);
    expect(JSON.stringify(steps)).not.toContain(LEAK);
  });
});

describe('model planner: a long task', () => {
  it('never sends a request over the context budget in 60 steps', async () => {
    const budget = 6_000;
    for (let step = 1; step <= 60; step += 1) {
      server.push({
        toolCalls: [{ name: 'type', arguments: { text: `line ${step} ${'w'.repeat(400)}`, target: 1, reason: `Step ${step}: ${'because '.repeat(150)}` } }],
      });
    }
    server.push({ toolCalls: [{ name: 'finish', arguments: { answer: 'typed it all' } }] });
    const { outcome, steps } = await run('Type sixty lines', { contextTokens: budget });
    expect(outcome).toEqual({ status: 'succeeded', result: 'typed it all' });
    expect(steps.filter((step) => step.type === 'action')).toHaveLength(60);
    expect(server.requests).toHaveLength(61);
    for (const request of server.requests) expect(estimateTokens(JSON.stringify(request.body))).toBeLessThanOrEqual(budget);
    // The budget did bite: the last request leaves the oldest steps out and keeps the newest.
    const last = userText(server.requests.at(-1));
    expect(last).toMatch(/\(\d+ earlier steps not shown\)/);
    expect(last).toContain('60. action: type "line 60');
  });
});

describe('model planner: a model repeating one action on an unchanged page', () => {
  const scrollDown = { toolCalls: [{ name: 'scroll', arguments: { direction: 'down' } }] };

  it('is told once at the third time, and fails with agent_loop at the fourth', async () => {
    server.push(scrollDown, scrollDown, scrollDown, scrollDown, { toolCalls: [{ name: 'finish', arguments: { answer: 'never' } }] });
    const { outcome, steps, driver } = await run('Read the whole page');
    expect(outcome).toEqual({ status: 'failed', error: 'agent_loop' });
    expect(steps.map((step) => [step.type, step.action])).toEqual([
      ['action', 'scroll down'],
      ['action', 'scroll down'],
      ['action', 'scroll down'],
      ['correction', 'correction repeated_action'],
      ['message', 'failed agent_loop'],
    ]);
    expect(steps.at(-1)?.note).toBe(FAILURE_DETAILS.agent_loop);
    expect(userText(server.requests[3])).toContain(CORRECTION_TEXTS.repeated_action);
    expect(driver.methods.filter((method) => method === 'scroll')).toHaveLength(3);
  });

  it('goes on when, once warned, the model does something else', async () => {
    server.push(scrollDown, scrollDown, scrollDown, { toolCalls: [{ name: 'click', arguments: { target: 2 } }] }, scrollDown, {
      toolCalls: [{ name: 'finish', arguments: { answer: 'done' } }],
    });
    const { outcome, steps } = await run('Read the whole page');
    expect(outcome).toEqual({ status: 'succeeded', result: 'done' });
    expect(steps.filter((step) => step.type === 'correction')).toHaveLength(1);
  });
});

describe('model planner: request failures fail the task with planner_error and leak nothing', () => {
  const LEAK = 'upstream-secret-detail';

  const failures: Array<[string, ScriptedReply]> = [
    ['HTTP 500', { status: 500, body: JSON.stringify({ error: { message: LEAK } }) }],
    ['HTTP 401', { status: 401, body: JSON.stringify({ error: { message: LEAK } }) }],
    ['a body that is not JSON', { status: 200, body: `<html>${LEAK}</html>` }],
  ];

  it.each(failures)('%s', async (_, reply) => {
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
