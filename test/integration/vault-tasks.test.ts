import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type ApiCall } from '../support/http';
import { base32, independentTotp, PROBE_FIELDS, startLoginPages, type LoginPages } from '../support/login-pages';
import { grayFrames, regionDifference, regionInk } from '../support/pixel-regions';
import { findInDatabase } from '../support/secret-search';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// The devices' CSS viewport is 1280 wide (local-provider.ts); a picture may be smaller (while
// only the recording watches, frames are at most 800 wide), so regions are scaled from it.
const VIEWPORT_WIDTH = 1280;

// Tasks that sign in with the credential vault on the offline planner, against a sign-in
// site served here, and a search for every secret in everything the service keeps or sends.

const totpKey = randomBytes(20);
const account = { username: 'alice', password: `Pw-${randomBytes(9).toString('base64url')}`, totpKey };
const TOTP_SECRET = base32(totpKey);
const PROBE_TEXT = `WM${randomBytes(6).toString('hex').toUpperCase()}`;
const SMS_CODES = [`C1-${randomBytes(3).toString('hex')}`, `C2-${randomBytes(3).toString('hex')}`];

let test: TestService;
let tenant: TestTenant;
let site: LoginPages;
let receiver: WebhookReceiver;
let api: ApiCall;
let key: string;
let deviceId: string;
const logs: string[] = [];
const taskIds: string[] = [];

beforeAll(async () => {
  site = await startLoginPages(account, PROBE_TEXT);
  receiver = await startWebhookReceiver();
  test = await startTestService({ OPERATOR_LOG_LEVEL: 'debug', OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '50' }, { logDestination: { write: (line) => void logs.push(line) } });
  tenant = await createTenant(test);
  key = await tenant.key(['operator:devices:write', 'operator:devices:read', 'operator:tasks:read', 'operator:tasks:write', 'operator:credentials:read', 'operator:credentials:write', 'operator:webhooks:write', 'operator:audit:read']);
  api = apiClient(test.url, key);
  expect((await api('POST', '/v1/webhook_endpoints', { url: receiver.url, space_id: tenant.spaceId })).status).toBe(201);
  const bank = await api('POST', '/v1/credentials', { name: 'bank', space_id: tenant.spaceId, domains: ['127.0.0.1'], username: account.username, password: account.password, totp_secret: TOTP_SECRET });
  expect(bank.status).toBe(201);
  expect((await api('POST', '/v1/credentials', { name: 'probe', space_id: tenant.spaceId, domains: ['127.0.0.1'], password: PROBE_TEXT })).status).toBe(201);
  const device = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
  expect(device.status).toBe(201);
  deviceId = device.body.id;
}, 120_000);
afterAll(async () => {
  await test?.stop();
  await receiver?.close();
  await site?.close();
});

async function runTask(prompt: string, until?: string[]): Promise<any> {
  const submitted = await api('POST', `/v1/devices/${deviceId}/tasks`, { prompt });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
  taskIds.push(submitted.body.id);
  return until === undefined ? waitForTaskEnd(api, submitted.body.id) : submitted.body;
}

async function stepsOf(taskId: string): Promise<any[]> {
  return (await readStream(`${test.url}/v1/tasks/${taskId}/events`, key)).frames.filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!));
}

async function bytesOf(url: string): Promise<Buffer> {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe('signing in from the vault', () => {
  it('logs in with username, password and a TOTP code computed at the fill', async () => {
    const task = await runTask(
      `go to ${site.url('/login')} then type "{{vault:bank.username}}" into "Username" then type "{{vault:bank.password}}" into "Password" then type "{{vault:bank.totp}}" into "One-time code" then click "Sign in" then return the text of "#welcome"`,
    );
    expect(task).toMatchObject({ status: 'succeeded', result: 'Welcome alice' });
    const login = site.submitted.at(-1)!;
    expect(login).toMatchObject({ username: 'alice', password: account.password });
    expect([independentTotp(totpKey, Date.now()), independentTotp(totpKey, Date.now() - 30_000), independentTotp(totpKey, Date.now() - 60_000)]).toContain(login.code);
    const actions = (await stepsOf(task.id)).map((step) => step.action);
    expect(actions).toEqual(expect.arrayContaining(['type "{{vault:bank.password}}" into "Password"', 'type "{{vault:bank.totp}}" into "One-time code"']));
    const credential = (await api('GET', `/v1/credentials?space_id=${tenant.spaceId}`)).body.data.find((item: any) => item.name === 'bank');
    expect(credential.last_used_at).not.toBeNull();
  });

  it('fails with credential_domain_mismatch on a page of another site, typing nothing', async () => {
    const typedBefore = site.typed.length;
    const task = await runTask(`go to ${site.url('/login', 'localhost')} then type "{{vault:bank.password}}" into "Password" then click "Sign in"`);
    expect(task).toMatchObject({ status: 'failed', result: { error: 'credential_domain_mismatch' } });
    expect(site.typed.slice(typedBefore)).toEqual([]);
    const actions = (await stepsOf(task.id)).map((step) => step.action);
    expect(actions.some((action: string) => action.startsWith('type'))).toBe(false);
  });

  it('fails with credential_not_found for a name the Space does not hold', async () => {
    const task = await runTask(`go to ${site.url('/login')} then type "{{vault:nobody.password}}" into "Password"`);
    expect(task).toMatchObject({ status: 'failed', result: { error: 'credential_not_found' } });
  });

  it('types a pushed code once: a second task waits for a fresh one', async () => {
    const bank = (await api('GET', `/v1/credentials?space_id=${tenant.spaceId}`)).body.data.find((item: any) => item.name === 'bank');
    const prompt = `go to ${site.url('/sms')} then type "{{vault:bank.code}}" into "SMS code" then click "Verify" then return the text of "#result"`;
    site.expectSmsCode(SMS_CODES[0]!);
    expect((await api('POST', `/v1/credentials/${bank.id}/codes`, { code: SMS_CODES[0] })).status).toBe(201);
    expect(await runTask(prompt)).toMatchObject({ status: 'succeeded', result: 'Verified' });

    site.expectSmsCode(SMS_CODES[1]!);
    const waiting = await runTask(prompt, []);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // The first code was used: nothing is typed until a new one comes.
    expect((await api('GET', `/v1/tasks/${waiting.id}`)).body.status).toBe('running');
    expect((await api('POST', `/v1/credentials/${bank.id}/codes`, { code: SMS_CODES[1] })).status).toBe(201);
    expect(await waitForTaskEnd(api, waiting.id)).toMatchObject({ status: 'succeeded', result: 'Verified' });
    expect(site.submitted.slice(-2).map((form) => form.sms)).toEqual(SMS_CODES);
  });

  it('masks a filled text field in step screenshots and the recording', async () => {
    const task = await runTask(`go to ${site.url('/probe?gate_ms=1500')} then type "{{vault:probe.password}}" into "#filled" then wait for "Gate open" then return the title`);
    expect(task).toMatchObject({ status: 'succeeded', result: 'Probe' });
    const typeStep = (await stepsOf(task.id)).find((step) => step.action === 'type "{{vault:probe.password}}" into "#filled"');
    const shotFile = path.join(tmpdir(), `vault-shot-${process.pid}.jpg`);
    const videoFile = path.join(tmpdir(), `vault-video-${process.pid}.mp4`);
    try {
      await writeFile(shotFile, await bytesOf(`${test.url}/v1/tasks/${task.id}/steps/${typeStep.seq}/screenshot`));
      const [shot] = await grayFrames(shotFile);
      // The field holds the value (it is not blank), drawn as the page's own masked field is, not as the clear one.
      expect(regionInk(shot!, PROBE_FIELDS.filled, VIEWPORT_WIDTH)).toBeGreaterThan(3);
      const toMasked = regionDifference(shot!, PROBE_FIELDS.filled, PROBE_FIELDS.masked, VIEWPORT_WIDTH);
      const toVisible = regionDifference(shot!, PROBE_FIELDS.filled, PROBE_FIELDS.visible, VIEWPORT_WIDTH);
      expect(toMasked).toBeLessThan(3);
      expect(toVisible).toBeGreaterThan(10);

      await writeFile(videoFile, await bytesOf(`${test.url}/v1/tasks/${task.id}/recording`));
      const frames = (await grayFrames(videoFile)).filter((frame) => regionInk(frame, PROBE_FIELDS.visible, VIEWPORT_WIDTH) > 3);
      expect(frames.length).toBeGreaterThan(0);
      // In no frame does the filled field look like the value in clear; once filled, it looks masked.
      for (const frame of frames) expect(regionDifference(frame, PROBE_FIELDS.filled, PROBE_FIELDS.visible, VIEWPORT_WIDTH)).toBeGreaterThan(8);
      expect(frames.some((frame) => regionDifference(frame, PROBE_FIELDS.filled, PROBE_FIELDS.masked, VIEWPORT_WIDTH) < 6)).toBe(true);
    } finally {
      await rm(shotFile, { force: true });
      await rm(videoFile, { force: true });
    }
  });

  it('unmasks the field once it no longer holds the secret: other text typed into it shows', async () => {
    // The page of the last test is still open: the field holds the masked secret. The new
    // text is as long as the secret, so left masked it would draw the same discs.
    expect('plain text 123').toHaveLength(PROBE_TEXT.length);
    const task = await runTask('type "plain text 123" into "#filled" then return the title');
    expect(task).toMatchObject({ status: 'succeeded', result: 'Probe' });
    const typeStep = (await stepsOf(task.id)).find((step) => step.action === 'type "plain text 123" into "#filled"');
    const shotFile = path.join(tmpdir(), `vault-shot-plain-${process.pid}.jpg`);
    try {
      await writeFile(shotFile, await bytesOf(`${test.url}/v1/tasks/${task.id}/steps/${typeStep.seq}/screenshot`));
      const [shot] = await grayFrames(shotFile);
      expect(regionInk(shot!, PROBE_FIELDS.filled, VIEWPORT_WIDTH)).toBeGreaterThan(3);
      expect(regionDifference(shot!, PROBE_FIELDS.filled, PROBE_FIELDS.masked, VIEWPORT_WIDTH)).toBeGreaterThan(8);
    } finally {
      await rm(shotFile, { force: true });
    }
  });

  it('never lets a secret into a table, a stream, a webhook, a log line or the audit trail', async () => {
    const typedCodes = site.submitted.map((form) => form.code).filter((code): code is string => code !== undefined);
    const secrets = [account.password, TOTP_SECRET, PROBE_TEXT, ...SMS_CODES, ...typedCodes];
    expect(typedCodes.length).toBeGreaterThan(0);
    expect(await findInDatabase(test.service.services.sql, secrets)).toEqual([]);
    for (const taskId of taskIds) {
      const stream = await readStream(`${test.url}/v1/tasks/${taskId}/events`, key);
      const task = await api('GET', `/v1/tasks/${taskId}`);
      for (const secret of secrets) {
        expect(stream.body).not.toContain(secret);
        expect(JSON.stringify(task.body)).not.toContain(secret);
      }
    }
    // Every task's end was delivered (created and ended: two events a task).
    await receiver.waitFor(taskIds.length * 2, 20_000);
    const webhookBodies = receiver.received.map((delivery) => delivery.rawBody.toString('utf8')).join('\n');
    const audit = JSON.stringify((await api('GET', '/v1/audit?limit=100')).body);
    expect(audit).toContain('operator.credential.used');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(webhookBodies).not.toContain(secret);
      expect(audit).not.toContain(secret);
      expect(logs.filter((line) => line.includes(secret))).toEqual([]);
    }
  });
});
