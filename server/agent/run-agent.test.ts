import { describe, expect, it } from 'vitest';
import { ActionError, type ActionErrorCode } from '../browser/types';
import type { AgentAction } from './agent-action';
import { FAILURE_DETAILS, type FailureCode } from './failures';
import { createOfflinePlanner } from './offline-planner';
import { PlannerError, type Planner, type PlannerInput } from './planner';
import { runAgent, WAIT_FOR_TEXT_TIMEOUT_MS, type RunAgentInput } from './run-agent';
import type { NewStep } from './step';
import { FakePageDriver } from '../../test/support/fake-page-driver';

const FORM = 'http://127.0.0.1:4000/form';
const DONE = 'http://127.0.0.1:4000/done';

function formSite(): FakePageDriver {
  return new FakePageDriver({
    [FORM]: {
      title: 'Sign up',
      elements: [
        { ref: 1, role: 'textbox', name: 'Email', tag: 'input' },
        { ref: 2, role: 'button', name: 'Submit', tag: 'button' },
      ],
    },
    [DONE]: { title: 'Thanks', texts: { '#message': 'Welcome, ada@example.com' } },
  });
}

interface Harness {
  driver: FakePageDriver;
  steps: NewStep[];
  input: RunAgentInput;
}

function harness(options: Partial<Omit<RunAgentInput, 'task'>> & { prompt?: string; maxSteps?: number | null } = {}): Harness {
  const driver = options.driver instanceof FakePageDriver ? options.driver : formSite();
  const steps: NewStep[] = [];
  const input: RunAgentInput = {
    task: { id: 'task_1', prompt: options.prompt ?? '', maxSteps: options.maxSteps ?? null, allowedDomains: ['127.0.0.1'], output: null, confirmBefore: null },
    driver,
    planner: options.planner ?? createOfflinePlanner(),
    history: options.history ?? [],
    recordStep: async (step) => {
      steps.push(step);
    },
    // These planners call no model.
    recordModelCall: async () => undefined,
    signal: options.signal ?? new AbortController().signal,
    deadline: options.deadline ?? Date.now() + 60_000,
  };
  return { driver, steps, input };
}

/** A planner that plays back fixed decisions and keeps what it was asked. */
function scriptedPlanner(actions: AgentAction[], wantsScreenshots = false): Planner & { inputs: PlannerInput[] } {
  const inputs: PlannerInput[] = [];
  return {
    wantsScreenshots,
    observesElements: true,
    maxCorrections: 0,
    inputs,
    async next(input) {
      inputs.push({ ...input, history: [...input.history] });
      const action = actions.shift();
      if (action === undefined) throw new PlannerError('planner_error', 'script exhausted');
      return { action, note: null };
    },
  };
}

const SIGN_UP = `go to ${FORM} then type "ada@example.com" into "Email" then click "Submit"; wait for "Welcome"
return the text of "#message"`;

describe('runAgent with the offline planner', () => {
  it('fills a form and returns the text asked for, recording one action step per instruction', async () => {
    const { driver, steps, input } = harness({ prompt: SIGN_UP });
    // The fake does not follow form posts; the click "lands" on the thank-you page.
    const click = driver.click.bind(driver);
    driver.click = async (target) => {
      await click(target);
      driver.url = DONE;
    };

    const outcome = await runAgent(input);

    expect(outcome).toEqual({ status: 'succeeded', result: 'Welcome, ada@example.com' });
    expect(driver.calls[0]).toEqual({ method: 'setAllowedDomains', args: [['127.0.0.1']] });
    expect(driver.calls.filter((call) => call.method !== 'observe')).toEqual([
      { method: 'setAllowedDomains', args: [['127.0.0.1']] },
      { method: 'navigate', args: [FORM] },
      { method: 'type', args: ['ada@example.com', 'Email'] },
      { method: 'click', args: ['Submit'] },
      { method: 'waitForText', args: ['Welcome', WAIT_FOR_TEXT_TIMEOUT_MS] },
      { method: 'textOf', args: ['#message'] },
    ]);
    expect(steps).toEqual([
      { type: 'action', action: `navigate ${FORM}`, url: FORM, title: 'Sign up', note: `go to ${FORM}` },
      { type: 'action', action: 'type "ada@example.com" into "Email"', url: FORM, title: 'Sign up', note: 'type "ada@example.com" into "Email"' },
      { type: 'action', action: 'click "Submit"', url: DONE, title: 'Thanks', note: 'click "Submit"' },
      { type: 'action', action: 'wait for "Welcome"', url: DONE, title: 'Thanks', note: 'wait for "Welcome"' },
      { type: 'action', action: 'extract text of "#message"', url: DONE, title: 'Thanks', note: 'return the text of "#message"' },
      { type: 'message', action: 'answer', url: DONE, title: 'Thanks', note: 'Welcome, ada@example.com' },
    ]);
  });

  it('returns the title or url read afresh from the page', async () => {
    const title = harness({ prompt: `open ${FORM}; return the title` });
    expect(await runAgent(title.input)).toEqual({ status: 'succeeded', result: 'Sign up' });
    const url = harness({ prompt: `open ${FORM}; return the url` });
    expect(await runAgent(url.input)).toEqual({ status: 'succeeded', result: FORM });
  });

  it('without a return, succeeds with the final url and title', async () => {
    const { steps, input } = harness({ prompt: `go to ${FORM} then scroll down then press Enter` });
    expect(await runAgent(input)).toEqual({ status: 'succeeded', result: { url: FORM, title: 'Sign up' } });
    expect(steps.map((step) => [step.type, step.action])).toEqual([
      ['action', `navigate ${FORM}`],
      ['action', 'scroll down'],
      ['action', 'press Enter'],
      ['message', 'answer'],
    ]);
    expect(steps.at(-1)?.note).toBe(JSON.stringify({ url: FORM, title: 'Sign up' }));
  });

  it("asks the driver for the page's elements only for a planner that reads them", async () => {
    const offline = harness({ prompt: `go to ${FORM} then scroll down` });
    await runAgent(offline.input);
    const observed = offline.driver.calls.filter((call) => call.method === 'observe').map((call) => call.args[0]);
    expect(observed.length).toBeGreaterThan(1);
    for (const options of observed) expect(options).toEqual({ screenshot: false, elements: false });

    const planner = scriptedPlanner([{ kind: 'navigate', url: FORM }, { kind: 'finish', answer: 'done' }]);
    await runAgent(harness({ planner }).input);
    expect(planner.inputs.at(-1)?.observation.elements.length).toBeGreaterThan(0);
  });

  it('fails an unparsable prompt with planner_unsupported before touching the page', async () => {
    const { driver, steps, input } = harness({ prompt: `go to ${FORM} then book me a cheap flight` });
    expect(await runAgent(input)).toEqual({ status: 'failed', error: 'planner_unsupported' });
    expect(driver.methods).toEqual(['setAllowedDomains', 'observe']);
    expect(steps).toEqual([
      { type: 'message', action: 'failed planner_unsupported', url: 'about:blank', title: '', note: FAILURE_DETAILS.planner_unsupported },
    ]);
  });

  it('parks at needs_human on ask a human, then resumes after it from the history', async () => {
    const prompt = `go to ${FORM} then ask a human "Which plan?" then click "Submit" then return the title`;
    const first = harness({ prompt });
    expect(await runAgent(first.input)).toEqual({ status: 'needs_human', question: 'Which plan?', help: 'question' });
    expect(first.steps.map((step) => [step.type, step.action, step.note])).toEqual([
      ['action', `navigate ${FORM}`, `go to ${FORM}`],
      ['action', 'ask_human "Which plan?"', 'ask a human "Which plan?"'],
      ['message', 'ask_human', 'Which plan?'],
    ]);

    const resumedDriver = formSite();
    resumedDriver.url = FORM;
    const resumed = harness({ prompt, driver: resumedDriver, history: first.steps });
    expect(await runAgent(resumed.input)).toEqual({ status: 'succeeded', result: 'Sign up' });
    expect(resumedDriver.methods.filter((method) => method !== 'observe')).toEqual(['setAllowedDomains', 'click']);
    expect(resumed.steps.map((step) => step.action)).toEqual(['click "Submit"', 'extract title', 'answer']);
  });

  it('continues a resumed task on the page it finds, never on one it opens by itself', async () => {
    // Whether the page is the one the task built is the task runner's decision (the
    // browser's incarnation); the agent never rebuilds a page from a URL in its history.
    const prompt = `go to ${FORM} then ask a human "Which plan?" then return the title`;
    const first = harness({ prompt });
    await runAgent(first.input);
    const history = [...first.steps, { type: 'message' as const, action: 'human_answer', url: null, title: null, note: 'Pro' }];

    const samePage = formSite();
    samePage.url = FORM;
    const resumed = harness({ prompt, history, driver: samePage });
    expect(await runAgent(resumed.input)).toEqual({ status: 'succeeded', result: 'Sign up' });
    expect(samePage.methods).not.toContain('navigate');
    expect(resumed.steps.map((step) => [step.type, step.action])).toEqual([
      ['action', 'extract title'],
      ['message', 'answer'],
    ]);
  });
});

describe('runAgent limits', () => {
  it('fails with max_steps_exceeded when the next action would pass max_steps', async () => {
    const { driver, steps, input } = harness({ prompt: `go to ${FORM} then click "Submit"`, maxSteps: 1 });
    expect(await runAgent(input)).toEqual({ status: 'failed', error: 'max_steps_exceeded' });
    expect(driver.methods).not.toContain('click');
    expect(steps.map((step) => [step.type, step.action])).toEqual([
      ['action', `navigate ${FORM}`],
      ['message', 'failed max_steps_exceeded'],
    ]);
  });

  it('counts resumed action steps against max_steps', async () => {
    const history: NewStep[] = [{ type: 'action', action: `navigate ${FORM}`, url: FORM, title: 'Sign up', note: null }];
    const onForm = formSite();
    onForm.url = FORM;
    const { driver, input } = harness({ prompt: `go to ${FORM} then click "Submit"`, maxSteps: 1, history, driver: onForm });
    expect(await runAgent(input)).toEqual({ status: 'failed', error: 'max_steps_exceeded' });
    expect(driver.methods).toEqual(['setAllowedDomains', 'observe']);
  });

  it('lets the planner finish when exactly max_steps actions were used', async () => {
    const { input } = harness({ prompt: `go to ${FORM} then scroll down`, maxSteps: 2 });
    expect(await runAgent(input)).toMatchObject({ status: 'succeeded' });
  });

  it('cancels within a tick even while a wait for is pending, recording nothing more', async () => {
    const controller = new AbortController();
    const { driver, steps, input } = harness({ prompt: `go to ${FORM} then wait for "never"`, signal: controller.signal });
    driver.hang('waitForText');
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    expect(await runAgent(input)).toEqual({ status: 'canceled' });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(steps.map((step) => step.action)).toEqual([`navigate ${FORM}`]);
  });

  it('does nothing at all when already canceled', async () => {
    const controller = new AbortController();
    controller.abort();
    const { driver, steps, input } = harness({ prompt: `go to ${FORM}`, signal: controller.signal });
    expect(await runAgent(input)).toEqual({ status: 'canceled' });
    expect(driver.calls).toEqual([]);
    expect(steps).toEqual([]);
  });

  it('times out at the deadline mid-wait and clamps the wait to the time left', async () => {
    const { driver, steps, input } = harness({ prompt: `go to ${FORM} then wait for "never"`, deadline: Date.now() + 200 });
    driver.hang('waitForText');
    expect(await runAgent(input)).toEqual({ status: 'failed', error: 'timeout' });
    const wait = driver.calls.find((call) => call.method === 'waitForText');
    expect(wait?.args[1]).toBeLessThanOrEqual(200);
    expect(steps.at(-1)).toMatchObject({ type: 'message', action: 'failed timeout', note: FAILURE_DETAILS.timeout });
  });

  it('reports a wait that timed out at the deadline as the task timeout', async () => {
    const { driver, input } = harness({ prompt: `go to ${FORM} then wait for "never"`, deadline: Date.now() + 100 });
    const wait = driver.waitForText.bind(driver);
    driver.waitForText = async (text, timeoutMs) => {
      await wait(text, timeoutMs);
      await new Promise((resolve) => setTimeout(resolve, timeoutMs + 20));
      throw new ActionError('timeout', 'waiting for text timed out');
    };
    expect(await runAgent(input)).toEqual({ status: 'failed', error: 'timeout' });
  });

  it('cancels a planner that is still thinking and aborts its signal', async () => {
    const controller = new AbortController();
    let plannerSignal: AbortSignal | undefined;
    const planner: Planner = {
      wantsScreenshots: false,
      observesElements: true,
      maxCorrections: 0,
      next: ({ signal }) => {
        plannerSignal = signal;
        return new Promise(() => undefined);
      },
    };
    const { input } = harness({ planner, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(await runAgent(input)).toEqual({ status: 'canceled' });
    expect(plannerSignal?.aborted).toBe(true);
  });
});

describe('runAgent failures', () => {
  const cases: Array<[keyof FakePageDriver & ActionMethod, ActionErrorCode, FailureCode, string]> = [
    ['navigate', 'navigation_failed', 'navigation_failed', `go to ${FORM}`],
    ['navigate', 'domain_not_allowed', 'domain_not_allowed', `go to ${FORM}`],
    ['click', 'target_not_found', 'element_not_found', 'click "Nope"'],
    ['waitForText', 'timeout', 'action_timeout', 'wait for "Nope"'],
    ['press', 'browser_gone', 'device_lost', 'press Enter'],
  ];
  type ActionMethod = 'navigate' | 'click' | 'waitForText' | 'press';

  it.each(cases)('%s throwing %s fails the task with %s and a fixed detail', async (method, code, failure, prompt) => {
    const { driver, steps, input } = harness({ prompt });
    const secret = 'net::ERR_CONNECTION_REFUSED at frame 0x7f selector div > #x stack: at foo.ts:1';
    driver.failNext(method, new ActionError(code, secret));
    expect(await runAgent(input)).toEqual({ status: 'failed', error: failure });
    expect(steps).toEqual([
      { type: 'message', action: `failed ${failure}`, url: 'about:blank', title: '', note: FAILURE_DETAILS[failure] },
    ]);
    expect(JSON.stringify(steps)).not.toContain('ERR_');
  });

  it('hands a download to the task runner with what the task may still keep, and records the step', async () => {
    const kept: unknown[] = [];
    const { driver, steps, input } = harness({ prompt: `go to ${FORM} then download "#report"` });
    input.downloads = { limits: async () => ({ maxBytes: 1234, timeoutMs: 5_000 }), keep: async (file) => void kept.push(file) };
    expect(await runAgent(input)).toMatchObject({ status: 'succeeded' });
    const call = driver.calls.find((entry) => entry.method === 'download');
    expect(call?.args).toEqual(['#report', { maxBytes: 1234, timeoutMs: 5_000 }]);
    expect(kept).toHaveLength(1);
    expect(steps.map((step) => step.action)).toContain('download "#report"');
  });

  it('fails a download with download_failed where the run keeps no downloads, and with download_too_large on the cap', async () => {
    const without = harness({ prompt: `go to ${FORM} then download "#report"` });
    expect(await runAgent(without.input)).toEqual({ status: 'failed', error: 'download_failed' });
    const capped = harness({ prompt: `go to ${FORM} then download "#report"` });
    capped.input.downloads = { limits: async () => ({ maxBytes: 1, timeoutMs: 5_000 }), keep: async () => undefined };
    capped.driver.failNext('download', new ActionError('download_too_large', 'too large'));
    expect(await runAgent(capped.input)).toEqual({ status: 'failed', error: 'download_too_large' });
  });

  it('fails with planner_error when the planner cannot decide', async () => {
    const { input } = harness({ planner: scriptedPlanner([]) });
    expect(await runAgent(input)).toEqual({ status: 'failed', error: 'planner_error' });
  });

  it('throws on an untyped driver error instead of guessing a failure code', async () => {
    const { driver, input } = harness({ prompt: `go to ${FORM}` });
    driver.navigate = async () => {
      throw new TypeError('bug');
    };
    await expect(runAgent(input)).rejects.toThrow(TypeError);
  });
});

describe('runAgent with a planner that targets element refs', () => {
  it('passes refs to the driver, names the element in the step and feeds back the history', async () => {
    const driver = formSite();
    driver.url = FORM;
    const planner = scriptedPlanner(
      [
        { kind: 'type', text: 'ada@example.com', into: { ref: 1 } },
        { kind: 'click', target: { ref: 2 } },
        { kind: 'finish', answer: 'signed up' },
      ],
      true,
    );
    const { steps, input } = harness({ planner, driver });
    expect(await runAgent(input)).toEqual({ status: 'succeeded', result: 'signed up' });
    expect(driver.calls.filter((call) => call.method === 'click')).toEqual([{ method: 'click', args: [{ ref: 2 }] }]);
    expect(steps.map((step) => step.action)).toEqual([
      'type "ada@example.com" into ref=1 (textbox "Email")',
      'click ref=2 (button "Submit")',
      'answer',
    ]);
    expect(planner.inputs.map((plannerInput) => plannerInput.history.length)).toEqual([0, 1, 2]);
    expect(planner.inputs.every((plannerInput) => plannerInput.observation.screenshot !== undefined)).toBe(true);
  });
});

describe('runAgent and text PostgreSQL cannot store', () => {
  const NUL_PAGE = 'http://127.0.0.1:4000/nul';
  const broken = (text: string) => `${text}\u0000\uD800`;
  const cleaned = (text: string) => `${text}\uFFFD\uFFFD`;

  function brokenSite(): FakePageDriver {
    return new FakePageDriver({ [NUL_PAGE]: { title: broken('Title'), texts: { '#t': broken('Text') } } });
  }

  it('records steps and returns a result with NUL and unpaired surrogates of the page replaced by U+FFFD', async () => {
    const { steps, input } = harness({ prompt: `go to ${NUL_PAGE} then return the text of "#t"`, driver: brokenSite() });
    input.task.allowedDomains = null;
    expect(await runAgent(input)).toEqual({ status: 'succeeded', result: cleaned('Text') });
    expect(steps.map((step) => [step.action, step.title, step.note])).toEqual([
      [`navigate ${NUL_PAGE}`, cleaned('Title'), `go to ${NUL_PAGE}`],
      ['extract text of "#t"', cleaned('Title'), 'return the text of "#t"'],
      ['answer', cleaned('Title'), cleaned('Text')],
    ]);
  });

  it('cleans what a model says too: its notes, its answer (keys included) and its question', async () => {
    const driver = brokenSite();
    driver.url = NUL_PAGE;
    const answer = harness({ planner: scriptedPlanner([{ kind: 'finish', answer: { [broken('k')]: [broken('v')] } }]), driver });
    expect(await runAgent(answer.input)).toEqual({ status: 'succeeded', result: { [cleaned('k')]: [cleaned('v')] } });

    const question = harness({ planner: scriptedPlanner([{ kind: 'ask_human', question: broken('Why'), help: 'question' }]), driver });
    expect(await runAgent(question.input)).toEqual({ status: 'needs_human', question: cleaned('Why'), help: 'question' });
    expect(question.steps.map((step) => [step.action, step.note])).toEqual([
      // The action quotes the question as JSON, whose escapes are plain storable text.
      ['ask_human "Why\\u0000\\ud800"', null],
      ['ask_human', cleaned('Why')],
    ]);
  });
});
