import { describe, expect, it } from 'vitest';
import { FakePageDriver } from '../../test/support/fake-page-driver';
import { createOfflinePlanner } from './offline-planner';
import { runAgent, type RunAgentInput } from './run-agent';
import type { NewStep } from './step';
import { parseVaultPlaceholder, type Vault, type VaultFillRequest, type VaultValue } from './vault-fill';

const LOGIN = 'http://127.0.0.1:4000/login';
const SECRET = 's3cret-Value-991';

function site(): FakePageDriver {
  return new FakePageDriver({
    [LOGIN]: { title: 'Sign in', elements: [{ ref: 1, role: 'textbox', name: 'Password', tag: 'input' }] },
  });
}

/** A vault that answers from a table and keeps what it was asked. */
function fakeVault(answer: (request: VaultFillRequest) => VaultValue): Vault & { requests: VaultFillRequest[] } {
  const requests: VaultFillRequest[] = [];
  return {
    requests,
    entries: async () => [{ name: 'bank', domains: ['127.0.0.1'] }],
    value: async (request) => {
      requests.push(request);
      return answer(request);
    },
  };
}

function run(prompt: string, vault: Vault | undefined, extra: Partial<RunAgentInput> = {}) {
  const driver = site();
  const steps: NewStep[] = [];
  const input: RunAgentInput = {
    task: { id: 'task_1', prompt, maxSteps: null, allowedDomains: null, output: null, confirmBefore: null },
    driver,
    planner: createOfflinePlanner(),
    history: [],
    recordStep: async (step) => {
      steps.push(step);
    },
    recordModelCall: async () => undefined,
    signal: new AbortController().signal,
    deadline: Date.now() + 60_000,
    ...(vault === undefined ? {} : { vault }),
    ...extra,
  };
  return { driver, steps, outcome: runAgent(input) };
}

const PROMPT = `go to ${LOGIN} then type "{{vault:bank.password}}" into "Password" then return the title`;

describe('vault fills', () => {
  it('parses only whole placeholders of the four fields', () => {
    expect(parseVaultPlaceholder('{{vault:bank-2.totp}}')).toEqual({ name: 'bank-2', field: 'totp' });
    for (const text of ['{{vault:bank.pin}}', 'x{{vault:bank.password}}', '{{vault:Bank.password}}', '{{password}}']) expect(parseVaultPlaceholder(text)).toBeNull();
  });

  it('types the value masked, asks with the page as it is now, and records only the placeholder', async () => {
    const vault = fakeVault(() => ({ ok: true, value: SECRET }));
    const { driver, steps, outcome } = run(PROMPT, vault);
    expect(await outcome).toEqual({ status: 'succeeded', result: 'Sign in' });
    expect(vault.requests).toEqual([{ name: 'bank', field: 'password', pageUrl: LOGIN, answeredCode: null }]);
    expect(driver.calls.find((call) => call.method === 'type')?.args).toEqual([SECRET, 'Password', { secret: true }]);
    expect(steps.map((step) => step.action)).toContain('type "{{vault:bank.password}}" into "Password"');
    expect(JSON.stringify(steps)).not.toContain(SECRET);
  });

  it.each(['credential_domain_mismatch', 'credential_not_found'] as const)('fails the task with %s and types nothing', async (refusal) => {
    const { driver, steps, outcome } = run(PROMPT, fakeVault(() => ({ ok: false, refusal })));
    expect(await outcome).toEqual({ status: 'failed', error: refusal });
    expect(driver.methods).not.toContain('type');
    expect(steps.at(-1)).toMatchObject({ type: 'message', action: `failed ${refusal}` });
  });

  it('fails with credential_not_found when the run has no vault', async () => {
    const { outcome } = run(PROMPT, undefined);
    expect(await outcome).toEqual({ status: 'failed', error: 'credential_not_found' });
  });

  it('asks a human for a code nobody pushed, and types their answer on the next run', async () => {
    const codePrompt = `go to ${LOGIN} then type "{{vault:bank.code}}" into "Password" then return the title`;
    const waiting = fakeVault((request) => (request.answeredCode === null ? { ok: false, refusal: 'code_not_pushed' } : { ok: true, value: request.answeredCode }));
    const first = run(codePrompt, waiting);
    expect(await first.outcome).toEqual({ status: 'needs_human', question: 'Provide the one-time code for the credential "bank"', help: 'credentials', fields: ['code'] });
    expect(first.driver.methods).not.toContain('type');

    // The page the task parked on stays open meanwhile.
    const page = site();
    page.url = LOGIN;
    const resumed = run(codePrompt, waiting, { driver: page, history: first.steps, credentials: new Map([['code', '884422']]) });
    expect(await resumed.outcome).toEqual({ status: 'succeeded', result: 'Sign in' });
    expect(waiting.requests.at(-1)?.answeredCode).toBe('884422');
    expect(page.calls.find((call) => call.method === 'type')?.args).toEqual(['884422', 'Password', { secret: true }]);
    expect(JSON.stringify(resumed.steps)).not.toContain('884422');
  });
});
