import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { base32, independentTotp, startLoginPages, type Account, type LoginPages } from '../support/login-pages';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '../support/scripted-openai-server';
import { findInDatabase } from '../support/secret-search';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The replay cache (issue 27) and the credential vault (issue 28) together. On the offline
// planner: a sign-in with {{vault:...}} fills is cached as its placeholders, a hit on a
// fresh device types the vault's values as they are now (a rotated password and TOTP
// secret), no value ever reaches an entry or any table, and the vault's domain guard still
// holds for a replayed run. On the model planner (the scripted endpoint): the fills a miss's
// model chose with fill_credential are replayed by a hit with no model call.

const newPassword = () => `Pw-${randomBytes(9).toString('base64url')}`;
const CACHE_KEY = 'bank.login';
const PLACEHOLDERS = ['{{vault:bank.username}}', '{{vault:bank.password}}', '{{vault:bank.totp}}'];

/**
 * A service with a sign-in site and the `bank` credential for it, in a tenant's Space; one
 * a describe block (the planner is the service's). `account` is the site's: change it to
 * rotate what the site accepts.
 */
class SignInBench {
  test!: TestService;
  tenant!: TestTenant;
  site!: LoginPages;
  api!: ApiCall;
  key!: string;
  credentialId!: string;
  readonly devices = new DeviceTracker(() => this.api);

  constructor(readonly account: Account) {}

  async start(env: Record<string, string> = {}): Promise<void> {
    this.site = await startLoginPages(this.account, 'unused');
    this.test = await startTestService(env);
    this.tenant = await createTenant(this.test);
    this.key = await this.tenant.key(['operator:devices:write', 'operator:devices:read', 'operator:tasks:read', 'operator:tasks:write', 'operator:credentials:read', 'operator:credentials:write']);
    this.api = apiClient(this.test.url, this.key);
    const { username, password, totpKey } = this.account;
    const bank = await this.api('POST', '/v1/credentials', { name: 'bank', space_id: this.tenant.spaceId, domains: ['127.0.0.1'], username, password, totp_secret: base32(totpKey) });
    expect(bank.status).toBe(201);
    this.credentialId = bank.body.id;
  }

  async stop(): Promise<void> {
    await this.test?.stop();
    await this.site?.close();
  }

  /** Rotates the credential in the vault and on the site: what was typed before no longer signs in. */
  async rotate(change: { password: string; totpKey?: Buffer }): Promise<void> {
    const body = { password: change.password, ...(change.totpKey === undefined ? {} : { totp_secret: base32(change.totpKey) }) };
    const rotated = await this.api('PATCH', `/v1/credentials/${this.credentialId}`, body);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    this.account.password = change.password;
    if (change.totpKey !== undefined) this.account.totpKey = change.totpKey;
  }

  /** Runs a task with a cache key on a fresh device (a new browser: nothing of an earlier run is left). */
  async run(prompt: string, cacheKey = CACHE_KEY): Promise<any> {
    const device = await this.devices.create(this.tenant.spaceId);
    const submitted = await this.api('POST', `/v1/devices/${device}/tasks`, { prompt, cache_key: cacheKey });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    return waitForTaskEnd(this.api, submitted.body.id);
  }

  async actionsOf(taskId: string): Promise<any[]> {
    const { frames } = await readStream(`${this.test.url}/v1/tasks/${taskId}/events`, this.key);
    return frames.filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!)).filter((step) => step.type === 'action');
  }

  async entry(cacheKey = CACHE_KEY): Promise<any> {
    const listed = await this.api('GET', `/v1/task_caches?space_id=${this.tenant.spaceId}`);
    expect(listed.status).toBe(200);
    return listed.body.data.find((item: any) => item.key === cacheKey);
  }

  /** The TOTP codes the site was sent: as secret as the password while they last. */
  typedCodes(): string[] {
    return this.site.submitted.map((form) => form.code).filter((code): code is string => code !== undefined);
  }
}

/** The typed texts an entry stores, in order. */
const storedTexts = (cached: any) => cached.steps.filter((step: any) => step.action.kind === 'type').map((step: any) => step.action.text);

describe('a cached sign-in from the vault on the offline planner', () => {
  const firstKey = randomBytes(20);
  const secondKey = randomBytes(20);
  const bench = new SignInBench({ username: 'alice', password: newPassword(), totpKey: firstKey });
  const FIRST_PASSWORD = bench.account.password;
  const SECOND_PASSWORD = newPassword();
  const TOTP_SECRETS = [base32(firstKey), base32(secondKey)];
  const SMS_CODES = [`C1-${randomBytes(3).toString('hex')}`, `C2-${randomBytes(3).toString('hex')}`];
  /** The run's action steps: go, three fills, the click and the return. */
  const ACTIONS = 6;
  const signIn = () =>
    `go to ${bench.site.url('/login')} then type "{{vault:bank.username}}" into "Username" then type "{{vault:bank.password}}" into "Password" then type "{{vault:bank.totp}}" into "One-time code" then click "Sign in" then return the text of "#welcome"`;

  beforeAll(() => bench.start(), 120_000);
  afterEach(() => bench.devices.deleteAll());
  afterAll(() => bench.stop());

  it('a first run is a miss that signs in, and its entry stores the placeholders', async () => {
    const task = await bench.run(signIn());
    expect(task).toMatchObject({ status: 'succeeded', result: 'Welcome alice', cache: { key: CACHE_KEY, outcome: 'miss' }, usage: { replayed_steps: 0 } });
    expect(bench.site.submitted.at(-1)).toMatchObject({ username: 'alice', password: FIRST_PASSWORD });
    const cached = await bench.entry();
    expect(storedTexts(cached)).toEqual(PLACEHOLDERS);
    expect(cached.steps.map((step: any) => step.described)).toEqual(expect.arrayContaining(PLACEHOLDERS.map((text, index) => `type "${text}" into "${['Username', 'Password', 'One-time code'][index]}"`)));
  });

  it('a hit on a fresh device replays every step and types the vault as it is now: a rotated password and TOTP secret', async () => {
    await bench.rotate({ password: SECOND_PASSWORD, totpKey: secondKey });
    const before = await bench.entry();

    const task = await bench.run(signIn());
    expect(task).toMatchObject({ status: 'succeeded', result: 'Welcome alice', cache: { outcome: 'hit' }, usage: { replayed_steps: ACTIONS, model_calls: 0 } });
    const login = bench.site.submitted.at(-1)!;
    expect(login).toMatchObject({ username: 'alice', password: SECOND_PASSWORD });
    // Computed at the fill from the new secret, not the code of the first run replayed.
    expect([independentTotp(secondKey, Date.now()), independentTotp(secondKey, Date.now() - 30_000), independentTotp(secondKey, Date.now() - 60_000)]).toContain(login.code);
    const actions = await bench.actionsOf(task.id);
    expect(actions.map((step) => step.replayed)).toEqual(Array(ACTIONS).fill(true));
    expect(actions.map((step) => step.action)).toEqual(expect.arrayContaining(['type "{{vault:bank.password}}" into "Password"', 'type "{{vault:bank.totp}}" into "One-time code"']));

    // A hit leaves the entry's steps as they were: still only the placeholders.
    const after = await bench.entry();
    expect(after).toMatchObject({ id: before.id, hits: before.hits + 1, steps: before.steps });
    expect(storedTexts(after)).toEqual(PLACEHOLDERS);
  });

  it('a replay that lands on another site fails credential_domain_mismatch, typing nothing, and leaves the entry as it was', async () => {
    const before = await bench.entry();
    const typedBefore = bench.site.typed.length;
    // The entry's first step opens the page on 127.0.0.1, which now redirects to localhost, a
    // site the credential does not name. The replay's page check notices first: the next
    // step was taken on another page, so the run heals (the offline planner runs the same
    // fill again), and the vault's guard, which checks the page as it is at the fill, refuses.
    bench.site.moveLoginTo('localhost');
    try {
      const task = await bench.run(signIn());
      expect(task).toMatchObject({ status: 'failed', result: { error: 'credential_domain_mismatch' }, cache: { outcome: 'healed' }, usage: { replayed_steps: 1 } });
      expect(bench.site.typed.slice(typedBefore)).toEqual([]);
      expect((await bench.actionsOf(task.id)).map((step) => step.action)).toEqual([`navigate ${bench.site.url('/login')}`]);
    } finally {
      bench.site.moveLoginTo(null);
    }
    expect(await bench.entry()).toEqual(before);
  });

  it('a replayed fill on the page the entry expects is still refused when the credential no longer names its site', async () => {
    const before = await bench.entry();
    const typedBefore = bench.site.typed.length;
    // The page is the one the step was recorded on, so the step itself is replayed (no heal):
    // the guard is the vault's, at the fill, not the replay's page check.
    expect((await bench.api('PATCH', `/v1/credentials/${bench.credentialId}`, { domains: ['example.com'] })).status).toBe(200);
    try {
      const task = await bench.run(signIn());
      expect(task).toMatchObject({ status: 'failed', result: { error: 'credential_domain_mismatch' }, cache: { outcome: 'hit' }, usage: { replayed_steps: 1 } });
      expect(bench.site.typed.slice(typedBefore)).toEqual([]);
      expect((await bench.actionsOf(task.id)).map((step) => step.action)).toEqual([`navigate ${bench.site.url('/login')}`]);
    } finally {
      expect((await bench.api('PATCH', `/v1/credentials/${bench.credentialId}`, { domains: ['127.0.0.1'] })).status).toBe(200);
    }
    expect(await bench.entry()).toEqual(before);
  });

  it('a pushed code is typed once: a hit types the code pushed for it, not the one the miss used', async () => {
    const prompt = `go to ${bench.site.url('/sms')} then type "{{vault:bank.code}}" into "SMS code" then click "Verify" then return the text of "#result"`;
    for (const [index, code] of SMS_CODES.entries()) {
      bench.site.expectSmsCode(code);
      expect((await bench.api('POST', `/v1/credentials/${bench.credentialId}/codes`, { code })).status).toBe(201);
      const task = await bench.run(prompt, 'bank.sms');
      expect(task).toMatchObject({ status: 'succeeded', result: 'Verified', cache: { outcome: index === 0 ? 'miss' : 'hit' } });
    }
    expect(bench.site.submitted.slice(-2).map((form) => form.sms)).toEqual(SMS_CODES);
    expect(storedTexts(await bench.entry('bank.sms'))).toEqual(['{{vault:bank.code}}']);
  });

  it('no password, TOTP secret or typed code is in task_caches or anywhere in the database', async () => {
    const codes = bench.typedCodes();
    expect(codes.length).toBe(2);
    const secrets = [FIRST_PASSWORD, SECOND_PASSWORD, ...TOTP_SECRETS, ...codes, ...SMS_CODES];
    const sql = bench.test.service.services.sql;
    // The search reads the rows the entry is stored in: they hold the placeholders.
    const rows = await sql<{ row: string }[]>`select t::text as row from task_caches t where t.space_id = ${bench.tenant.spaceId}`;
    expect(rows).toHaveLength(2);
    const stored = rows.map(({ row }) => row).join('\n');
    for (const placeholder of [...PLACEHOLDERS, '{{vault:bank.code}}']) expect(stored).toContain(placeholder);
    for (const secret of secrets) expect(stored).not.toContain(secret);
    expect(await findInDatabase(sql, secrets)).toEqual([]);
  });
});

describe('fill_credential in a cached run on the model planner', () => {
  const bench = new SignInBench({ username: 'alice', password: newPassword(), totpKey: randomBytes(20) });
  const FIRST_PASSWORD = bench.account.password;
  const SECOND_PASSWORD = newPassword();
  const PROMPT = 'Sign in to the bank and tell me the greeting.';
  let model: ScriptedOpenAiServer;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    await bench.start({ OPERATOR_MODEL_BASE_URL: model.baseUrl, OPERATOR_MODEL_API_KEY: 'sk-scripted-test', OPERATOR_MODEL: 'scripted-model' });
  }, 120_000);
  afterEach(() => bench.devices.deleteAll());
  afterAll(async () => {
    await bench.stop();
    await model?.close();
  });

  it('a miss records the model’s fills as placeholders; a hit replays them with no model call and the rotated password', async () => {
    model.push(
      { toolCalls: [{ name: 'navigate', arguments: { url: bench.site.url('/login') } }] },
      { toolCalls: [{ name: 'fill_credential', arguments: { name: 'bank', field: 'username', target: 'Username' } }] },
      { toolCalls: [{ name: 'fill_credential', arguments: { name: 'bank', field: 'password', target: 'Password' } }] },
      { toolCalls: [{ name: 'fill_credential', arguments: { name: 'bank', field: 'totp', target: 'One-time code' } }] },
      { toolCalls: [{ name: 'click', arguments: { target: 'Sign in' } }] },
      { toolCalls: [{ name: 'extract_text', arguments: { selector: '#welcome' } }] },
    );
    const miss = await bench.run(PROMPT);
    expect(miss).toMatchObject({ status: 'succeeded', result: 'Welcome alice', cache: { outcome: 'miss' }, usage: { model_calls: 6, replayed_steps: 0 } });
    expect(storedTexts(await bench.entry())).toEqual(PLACEHOLDERS);

    await bench.rotate({ password: SECOND_PASSWORD });
    const requestsBefore = model.requests.length;
    const hit = await bench.run(PROMPT);
    expect(hit).toMatchObject({ status: 'succeeded', result: 'Welcome alice', cache: { outcome: 'hit' }, usage: { model_calls: 0, replayed_steps: 6 } });
    expect(model.requests.length).toBe(requestsBefore);
    expect(bench.site.submitted.at(-1)).toMatchObject({ username: 'alice', password: SECOND_PASSWORD, code: expect.stringMatching(/^\d{6}$/) });
    const actions = await bench.actionsOf(hit.id);
    expect(actions.every((step) => step.replayed === true)).toBe(true);
    expect(actions.map((step) => step.action)).toContain('type "{{vault:bank.password}}" into "Password"');

    const cached = await bench.entry();
    expect(cached).toMatchObject({ hits: 1 });
    expect(storedTexts(cached)).toEqual(PLACEHOLDERS);
    const codes = bench.typedCodes();
    expect(codes).toHaveLength(2);
    const secrets = [FIRST_PASSWORD, SECOND_PASSWORD, base32(bench.account.totpKey), ...codes];
    for (const secret of secrets) expect(JSON.stringify(cached)).not.toContain(secret);
    expect(await findInDatabase(bench.test.service.services.sql, secrets)).toEqual([]);
  });
});
