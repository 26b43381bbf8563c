import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type ApiCall } from '../support/http';
import { base32, startLoginPages, type LoginPages } from '../support/login-pages';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '../support/scripted-openai-server';
import { findInDatabase } from '../support/secret-search';
import { waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService } from '../support/test-service';

// The model planner's fill_credential tool against a scripted OpenAI-compatible endpoint:
// the model is told the credentials' names and domains, and never receives a value.

const totpKey = randomBytes(20);
const account = { username: 'alice', password: `Pw-${randomBytes(9).toString('base64url')}`, totpKey };
const TOTP_SECRET = base32(totpKey);

let test: TestService;
let site: LoginPages;
let model: ScriptedOpenAiServer;
let api: ApiCall;
let spaceId: string;

beforeAll(async () => {
  site = await startLoginPages(account, 'unused');
  model = await startScriptedOpenAiServer();
  test = await startTestService({ OPERATOR_MODEL_BASE_URL: model.baseUrl, OPERATOR_MODEL_API_KEY: 'sk-scripted-test', OPERATOR_MODEL: 'scripted-model' });
  const tenant = await createTenant(test);
  spaceId = tenant.spaceId;
  api = apiClient(test.url, await tenant.key(['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:credentials:write']));
  const created = await api('POST', '/v1/credentials', { name: 'bank', space_id: spaceId, domains: ['127.0.0.1'], username: account.username, password: account.password, totp_secret: TOTP_SECRET });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await test?.stop();
  await model?.close();
  await site?.close();
});

describe('fill_credential on the model planner', () => {
  it('signs in with the values the model never sees', async () => {
    model.push(
      { toolCalls: [{ name: 'navigate', arguments: { url: site.url('/login') } }] },
      { toolCalls: [{ name: 'fill_credential', arguments: { name: 'bank', field: 'username', target: 'Username' } }] },
      { toolCalls: [{ name: 'fill_credential', arguments: { name: 'bank', field: 'password', target: 'Password' } }] },
      { toolCalls: [{ name: 'fill_credential', arguments: { name: 'bank', field: 'totp', target: 'One-time code', reason: 'The site asks for the authenticator code.' } }] },
      { toolCalls: [{ name: 'click', arguments: { target: 'Sign in' } }] },
      { toolCalls: [{ name: 'extract_text', arguments: { selector: '#welcome' } }] },
    );
    const device = await api('POST', '/v1/devices', { space_id: spaceId });
    const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: 'Sign in to the bank and tell me the greeting.' });
    expect(submitted.status).toBe(202);
    const task = await waitForTaskEnd(api, submitted.body.id);
    expect(task).toMatchObject({ status: 'succeeded', result: 'Welcome alice' });

    const typedCode = site.submitted.at(-1)!.code!;
    expect(typedCode).toMatch(/^\d{6}$/);
    const requests = JSON.stringify(model.requests);
    // It was told what it may fill, by name and domain, and given the tool.
    expect(requests).toContain('Credentials you may fill with fill_credential, each only on its domains: bank (127.0.0.1).');
    for (const request of model.requests) expect(request.body.tools?.map((tool) => tool.function.name)).toContain('fill_credential');
    expect(requests).toContain('type \\"{{vault:bank.totp}}\\"');
    // Once filled, the code field reached the model with no value at all (a masked field shows none).
    expect(requests).toContain('textbox \\"One-time code\\"\\n');
    for (const secret of [account.password, TOTP_SECRET, typedCode]) expect(requests).not.toContain(secret);
    expect(await findInDatabase(test.service.services.sql, [account.password, TOTP_SECRET, typedCode])).toEqual([]);
  });
});
