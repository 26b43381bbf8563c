import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskPages, type TaskPages } from '../../test/support/task-pages';
import { LocalBrowserProvider } from '../browser/local-provider';
import { BROWSER_ISOLATION } from '../../test/support/browser-fixtures';
import type { BrowserHandle, PageDriver } from '../browser/types';
import { createModelPlanner } from './model-planner';
import { createOfflinePlanner } from './offline-planner';
import type { Planner } from './planner';
import { runAgent } from './run-agent';
import type { NewStep } from './step';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '../../test/support/scripted-openai-server';

// The agent on a real Chromium (found on PATH) against pages served on 127.0.0.1.

let site: TaskPages;
let origin: string;
let dataDir: string;
let handle: BrowserHandle;
let driver: PageDriver;

beforeAll(async () => {
  site = await startTaskPages();
  origin = new URL(site.url('/')).origin;
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-chromium-'));
  handle = await new LocalBrowserProvider({ chromiumPath: null, dataDir, ...BROWSER_ISOLATION, egress: null }).launch({ deviceId: 'agent-device', orgId: 'org-1' });
  driver = await handle.page();
});

afterAll(async () => {
  await handle?.close();
  await site?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function run(prompt: string, planner: Planner, allowedDomains: string[] | null = ['127.0.0.1']) {
  const steps: NewStep[] = [];
  const outcome = await runAgent({
    task: { id: 'task_1', prompt, maxSteps: 10, allowedDomains, output: null, confirmBefore: null },
    driver,
    planner,
    history: [],
    recordStep: async (step) => {
      steps.push(step);
    },
    // These planners call no model.
    recordModelCall: async () => undefined,
    signal: new AbortController().signal,
    deadline: Date.now() + 45_000,
  });
  return { outcome, steps };
}

describe('runAgent on real Chromium', () => {
  it('fills a form with the offline planner and returns the text of the result page', async () => {
    const prompt = `go to ${origin}/form then type "ada@example.com" into "Email" then click "Submit"
      wait for "Welcome"; return the text of "#message"`;
    const { outcome, steps } = await run(prompt, createOfflinePlanner());
    expect(outcome).toEqual({ status: 'succeeded', result: 'Welcome, ada@example.com' });
    expect(steps.map((step) => [step.type, step.action, step.title])).toEqual([
      ['action', `navigate ${origin}/form`, 'Sign up'],
      ['action', 'type "ada@example.com" into "Email"', 'Sign up'],
      ['action', 'click "Submit"', 'Thanks'],
      ['action', 'wait for "Welcome"', 'Thanks'],
      ['action', 'extract text of "#message"', 'Thanks'],
      ['message', 'answer', 'Thanks'],
    ]);
  });

  it('fails with domain_not_allowed when the prompt leaves the allowed domains', async () => {
    const { outcome, steps } = await run(`go to ${origin}/form`, createOfflinePlanner(), ['example.com']);
    expect(outcome).toEqual({ status: 'failed', error: 'domain_not_allowed' });
    expect(steps.map((step) => step.action)).toEqual(['failed domain_not_allowed']);
  });

  it('fails with element_not_found for a target that is not on the page', async () => {
    const { outcome } = await run(`go to ${origin}/form then click "No such button"`, createOfflinePlanner());
    expect(outcome).toEqual({ status: 'failed', error: 'element_not_found' });
  });

  describe('with the model planner', () => {
    let model: ScriptedOpenAiServer;
    beforeAll(async () => {
      model = await startScriptedOpenAiServer();
    });
    afterAll(async () => {
      await model?.close();
    });

    it('carries out scripted tool calls, targeting the element refs it observed', async () => {
      model.push(
        { toolCalls: [{ name: 'navigate', arguments: { url: `${origin}/form` } }] },
        { toolCalls: [{ name: 'type', arguments: { text: 'grace@example.com', target: 'Email' } }] },
      );
      const planner = createModelPlanner({ baseUrl: model.baseUrl, apiKey: 'k', model: 'm', maxRetries: 0 });
      // The submit button's ref is read from what the real page reported, then scripted.
      const scripted: Planner = {
        wantsScreenshots: false,
        observesElements: true,
        maxCorrections: planner.maxCorrections,
        async next(input) {
          if (model.requests.length === 2) {
            const submit = input.observation.elements.find((element) => element.name === 'Submit');
            model.push(
              { toolCalls: [{ name: 'click', arguments: { target: submit?.ref ?? -1 } }] },
              { toolCalls: [{ name: 'extract_text', arguments: { selector: '#message' } }] },
            );
          }
          return planner.next(input);
        },
      };
      const { outcome, steps } = await run('Sign up as grace', scripted);
      expect(outcome).toEqual({ status: 'succeeded', result: 'Welcome, grace@example.com' });
      expect(steps.map((step) => step.action)).toEqual([
        `navigate ${origin}/form`,
        'type "grace@example.com" into "Email"',
        expect.stringMatching(/^click ref=\d+ \(button "Submit"\)$/),
        'extract text of "#message"',
        'answer',
      ]);
      expect(model.requests[1]?.body.messages.at(-1)?.content).toContain('textbox "Email"');
    });
  });
});
