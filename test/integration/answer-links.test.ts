import { createTRPCClient, httpLink, isTRPCClientError } from '@trpc/client';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, escalations, sessions } from '../../db/schema';
import type { ConsoleAppRouter } from '../../server/console/console-router';
import { answerLinkMayControl, operatorMayControl } from '../../server/domain/sessions/session-control';
import { createOperator } from '../../server/domain/console/operator-accounts';
import { parsePublicId } from '../../server/domain/ids';
import { hashSecret } from '../../server/domain/secret-hash';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// The console's live actions (escalation detail, watch, take over, release, all audited
// with the operator's name) and the answer_url: a one-time link whose secret is stored
// only as a hash and travels only in the URL's fragment, opened once for an access token,
// refused once the escalation is answered, expired or canceled. Real server, PostgreSQL,
// Chromium and escalation receiver.

const AUTH_FAILURE_LIMIT = 40;
const PUBLIC_URL = 'https://operator.example';

let test: TestService;
let tenant: TestTenant;
let pages: TaskPages;
let api: ApiCall;
let receiver: WebhookReceiver;
let consoleKey: string;
const devices = new DeviceTracker(() => api);

beforeAll(async () => {
  pages = await startTaskPages();
  receiver = await startWebhookReceiver((res) => res.writeHead(200).end());
  test = await startTestService({ OPERATOR_PUBLIC_URL: PUBLIC_URL, OPERATOR_AUTH_FAILURE_LIMIT: String(AUTH_FAILURE_LIMIT), OPERATOR_AUTH_FAILURE_WINDOW_SECS: '600' });
  tenant = await createTenant(test, { escalationUrl: receiver.url });
  api = apiClient(test.url, await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:sessions:write', 'operator:sessions:control']));
  consoleKey = (await createOperator(test.service.services.db, 'Ada')).console_key;
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await receiver?.close();
  await pages?.close();
});

/** A console API client: with the sign-in cookie after signIn, or an answer page's access token. */
function client(access: { token: string | null } = { token: null }) {
  const jar = { cookie: '' };
  return createTRPCClient<ConsoleAppRouter>({
    links: [
      httpLink({
        url: `${test.url}/console/api`,
        headers: () => ({
          'x-svc-console': '1',
          ...(jar.cookie === '' ? {} : { cookie: jar.cookie }),
          ...(access.token === null ? {} : { 'x-svc-answer-access': access.token }),
        }),
        fetch: async (url, init) => {
          const response = await fetch(url, init);
          const setCookie = response.headers.get('set-cookie');
          if (setCookie !== null) jar.cookie = setCookie.split(';', 1)[0]!;
          return response;
        },
      }),
    ],
  });
}

async function signedIn() {
  const operator = client();
  await operator.signIn.mutate({ console_key: consoleKey });
  return operator;
}

async function failure(call: Promise<unknown>): Promise<{ status: number; code: string; message: string; param?: string }> {
  try {
    await call;
  } catch (error) {
    if (!isTRPCClientError<ConsoleAppRouter>(error)) throw error;
    const body = (error.meta?.responseJSON ?? {}) as { error?: { code?: string; message?: string } };
    if (error.data) {
      const { httpStatus, code, param } = error.data as { httpStatus: number; code: string; param?: string };
      return { status: httpStatus, code, message: error.message, ...(param === undefined ? {} : { param }) };
    }
    return { status: (error.meta?.response as Response).status, code: body.error?.code ?? '', message: body.error?.message ?? '' };
  }
  throw new Error('expected the call to fail');
}

interface Parked {
  task: string;
  device: string;
  escalationId: string;
  answerUrl: string;
  secret: string;
}

/** A task that opens /echo, asks a human, then returns what #echo shows; with its delivery's answer_url. */
async function park(question: string, then = 'return the text of "#echo"', ask = `ask a human "${question}"`): Promise<Parked> {
  const device = await devices.create(tenant.spaceId);
  const before = receiver.received.length;
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${pages.url('/echo')} then ${ask} then ${then}` });
  expect(submitted.status).toBe(202);
  await waitForTaskEnd(api, submitted.body.id, 20_000, ['needs_human']);
  const [received] = (await receiver.waitFor(before + 1)).slice(before);
  const delivery = JSON.parse(received!.rawBody.toString('utf8'));
  const answerUrl: string = delivery.answer_url;
  return { task: submitted.body.id, device, escalationId: delivery.escalation.id, answerUrl, secret: new URL(answerUrl).hash.slice(1) };
}

async function open(parked: Parked) {
  const access = { token: null as string | null };
  const page = client(access);
  access.token = (await page.openAnswerLink.mutate({ escalation_id: parked.escalationId, secret: parked.secret })).access_token;
  return page;
}

describe('answer_url', () => {
  it('is delivered with the secret only in the fragment, stored only as a hash, and opens once', async () => {
    const parked = await park('What is your name?');
    const url = new URL(parked.answerUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${PUBLIC_URL}/answer/${parked.escalationId}`);
    expect(url.search).toBe('');
    expect(parked.secret).toMatch(/^anslnk_[A-Za-z0-9_-]{43}$/);

    const db = test.service.services.db;
    const [row] = await db.select().from(escalations).where(eq(escalations.id, parsePublicId('escalation', parked.escalationId)!));
    expect(row!.answerLinkHashes).toEqual([hashSecret(parked.secret)]);
    const page = await open(parked);
    // Nowhere in the database in clear: not the link's secret, not the page's access token.
    for (const secret of [parked.secret]) {
      const [{ found }] = (await db.execute(sql`select
        (select count(*) from escalations where row_to_json(escalations)::text like ${'%' + secret + '%'})
      + (select count(*) from audit_events where row_to_json(audit_events)::text like ${'%' + secret + '%'})
      + (select count(*) from events where row_to_json(events)::text like ${'%' + secret + '%'}) as found`)) as unknown as [{ found: string }];
      expect(Number(found)).toBe(0);
    }

    // Opened once: a second visit (the same link, or forwarded) is refused.
    expect(await failure(client().openAnswerLink.mutate({ escalation_id: parked.escalationId, secret: parked.secret }))).toMatchObject({ status: 410, code: 'answer_link_used' });

    const view = await page.answerLink.query({ escalation_id: parked.escalationId });
    expect(view.escalation.reason).toBe('What is your name?');
    expect(view.task.prompt).toContain('ask a human "What is your name?"');
    expect(view.task.status).toBe('needs_human');
    expect(view.steps.length).toBeGreaterThan(0);
    expect(view.steps.some((step) => step.url === pages.url('/echo'))).toBe(true);
    // Step screenshots are the console's, not an answer link's (answer-link-actions.ts says why).
    expect(view.steps.map((step) => step.screenshot_url)).toEqual(view.steps.map(() => null));
    expect(view.may_take_over).toBe(true);

    // Watching mints a watch session of the escalation's device, audited as the link's.
    const watch = await page.watchDevice.mutate({ escalation_id: parked.escalationId, device_id: parked.device });
    expect(watch).toMatchObject({ mode: 'watch', device_id: parked.device });
    const [created] = await db.select().from(auditEvents).where(eq(auditEvents.resourceId, watch.id));
    expect(created).toMatchObject({ actor: 'system', action: 'operator.session.created' });
    expect(created!.details).toMatchObject({ via: 'answer_url', escalation_id: parked.escalationId });

    // The gateway relays input from the link's sessions while the escalation is pending.
    expect(await answerLinkMayControl(db, `answer_url:${row!.id}`)).toBe(true);
    expect(await operatorMayControl(db, `answer_url:${row!.id}`)).toBeNull();
    expect(await operatorMayControl(db, 'operator:Ada')).toBe(true);
    expect(await operatorMayControl(db, 'operator:Nobody')).toBe(false);
    expect(await answerLinkMayControl(db, 'operator:Ada')).toBeNull();
    // A page that closes ends the sessions it minted; only the link's own.
    const second = await page.watchDevice.mutate({ escalation_id: parked.escalationId, device_id: parked.device });
    expect(await page.endSession.mutate({ escalation_id: parked.escalationId, session_id: second.id })).toEqual({ ended: true });

    // Taking over holds the device; answering resumes the task and ends the hold and the link.
    const held = await page.takeOverDevice.mutate({ escalation_id: parked.escalationId, device_id: parked.device });
    expect(held.session.mode).toBe('control');
    expect((await api('GET', `/v1/tasks/${parked.task}`)).body.status).toBe('needs_human');
    const answered = await page.answerEscalation.mutate({ escalation_id: parked.escalationId, answer: 'Ada', cleared: true });
    expect(answered).toMatchObject({ applied: true, status: 'resolved' });
    const [session] = await db.select().from(sessions).where(eq(sessions.id, parsePublicId('session', held.session.id)!));
    expect(session!.holdTaskId).toBeNull();
    expect(session!.revokedAt).not.toBeNull();
    const ended = await waitForTaskEnd(api, parked.task, 20_000);
    expect(ended.status).toBe('succeeded');
    const [resolved] = await db.select().from(escalations).where(eq(escalations.id, parsePublicId('escalation', parked.escalationId)!));
    expect(resolved!.resolvedBy).toBe('answer_url');
    expect(await answerLinkMayControl(db, `answer_url:${row!.id}`)).toBe(false);

    // Answered: the page's access and the link are refused, saying so.
    expect(await failure(page.answerLink.query({ escalation_id: parked.escalationId }))).toEqual({ status: 410, code: 'escalation_closed', message: 'This escalation was already answered.' });
    expect(await failure(client().openAnswerLink.mutate({ escalation_id: parked.escalationId, secret: parked.secret }))).toMatchObject({ status: 410, code: 'escalation_closed' });
  });

  it('shows the kind and options, and takes a typed answer checked against answer_schema', async () => {
    const parked = await park('', 'return the title', 'ask a human to choose between "Blue" and "Red"');
    const page = await open(parked);
    const view = await page.answerLink.query({ escalation_id: parked.escalationId });
    expect(view.escalation).toMatchObject({ kind: 'choice', options: ['Blue', 'Red'], multiple: false, fields: null, on_timeout: 'fail', answer_schema: { type: 'string', enum: ['Blue', 'Red'] } });
    expect(Date.parse(view.escalation.expires_at)).toBeGreaterThan(Date.now());
    // Not an option: refused naming the answer, and the escalation stays open.
    expect(await failure(page.answerEscalation.mutate({ escalation_id: parked.escalationId, answer: 'Green', cleared: true }))).toMatchObject({ status: 400, code: 'invalid_request', param: 'answer' });
    expect(await failure(page.answerEscalation.mutate({ escalation_id: parked.escalationId, answer: ['Blue'], cleared: true }))).toMatchObject({ status: 400, param: 'answer' });
    expect((await page.answerLink.query({ escalation_id: parked.escalationId })).escalation.status).toBe('pending');
    expect(await page.answerEscalation.mutate({ escalation_id: parked.escalationId, answer: 'Red', cleared: true })).toMatchObject({ applied: true, status: 'resolved' });
    expect(await waitForTaskEnd(api, parked.task, 20_000)).toMatchObject({ status: 'succeeded' });
    const [row] = await test.service.services.db.select().from(escalations).where(eq(escalations.id, parsePublicId('escalation', parked.escalationId)!));
    expect(row!.answer).toBe('Red');
  });

  it("refuses a wrong secret, another escalation's secret and a missing access token with one 401", async () => {
    const first = await park('First?');
    const second = await park('Second?');
    const invalid = { status: 401, code: 'invalid_answer_link', message: 'This answer link is not valid.' };
    expect(await failure(client().openAnswerLink.mutate({ escalation_id: first.escalationId, secret: second.secret }))).toEqual(invalid);
    expect(await failure(client().openAnswerLink.mutate({ escalation_id: first.escalationId, secret: `${first.secret.slice(0, -1)}${first.secret.endsWith('A') ? 'B' : 'A'}` }))).toEqual(invalid);
    expect(await failure(client().openAnswerLink.mutate({ escalation_id: 'esc_nope', secret: first.secret }))).toEqual(invalid);
    expect(await failure(client().answerLink.query({ escalation_id: first.escalationId }))).toEqual(invalid);
    // Another escalation's access token opens only its own.
    const secondPage = await open(second);
    expect(await failure(secondPage.answerLink.query({ escalation_id: first.escalationId }))).toEqual(invalid);
    // The refusals changed nothing: the right secret still opens the first link.
    const firstPage = await open(first);
    expect((await firstPage.answerLink.query({ escalation_id: first.escalationId })).escalation.id).toBe(first.escalationId);
    // A session this link did not mint is not its to release.
    const apiSession = await api('POST', `/v1/devices/${first.device}/sessions`, { mode: 'control' });
    expect(await failure(firstPage.releaseTakeover.mutate({ escalation_id: first.escalationId, session_id: apiSession.body.id }))).toMatchObject({ status: 404, code: 'session_not_found' });
    // Nor is another escalation's device its to watch or take over.
    expect(await failure(firstPage.watchDevice.mutate({ escalation_id: first.escalationId, device_id: second.device }))).toMatchObject({ status: 404, code: 'device_not_found' });
    expect(await failure(firstPage.takeOverDevice.mutate({ escalation_id: first.escalationId, device_id: second.device }))).toMatchObject({ status: 404, code: 'device_not_found' });
  });

  it('stops working once the escalation expires, and once a released takeover cancels it', async () => {
    const expiring = await park('Still there?');
    const page = await open(expiring);
    await test.service.services.db
      .update(escalations)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(escalations.id, parsePublicId('escalation', expiring.escalationId)!));
    await expect.poll(async () => (await failure(page.answerLink.query({ escalation_id: expiring.escalationId }))).message, { timeout: 10_000 }).toBe('This escalation expired before it was answered.');
    expect((await waitForTaskEnd(api, expiring.task, 10_000)).result.error).toBe('escalation_expired');

    const released = await park('Take it over?');
    const releasedPage = await open(released);
    const held = await releasedPage.takeOverDevice.mutate({ escalation_id: released.escalationId, device_id: released.device });
    expect(await releasedPage.releaseTakeover.mutate({ escalation_id: released.escalationId, session_id: held.session.id })).toMatchObject({ resumed: true });
    expect(await failure(releasedPage.answerLink.query({ escalation_id: released.escalationId }))).toMatchObject({ status: 410, code: 'escalation_closed', message: 'This escalation was canceled: the task no longer waits for it.' });
  });
});

describe('answer_url of a task that asks again', () => {
  it('does not show the earlier answers to the holder of the next link', async () => {
    const parked = await park('The password?', 'ask a human "And the code?" then return the title');
    const operator = await signedIn();
    const before = receiver.received.length;
    await operator.answerEscalation.mutate({ escalation_id: parked.escalationId, answer: 'hunter2', cleared: true });
    await waitForTaskEnd(api, parked.task, 20_000, ['needs_human']);
    const [received] = (await receiver.waitFor(before + 1)).slice(before);
    const next = JSON.parse(received!.rawBody.toString('utf8'));
    expect(next.escalation.reason).toBe('And the code?');
    const page = await open({ ...parked, escalationId: next.escalation.id, secret: new URL(next.answer_url).hash.slice(1) });
    const view = await page.answerLink.query({ escalation_id: next.escalation.id });
    const answered = view.steps.find((step) => step.action === 'human_answer');
    expect(answered?.note).toBe('(an earlier answer, not shown on answer links)');
    expect(JSON.stringify(view)).not.toContain('hunter2');
    // The console's operators see it.
    expect((await operator.escalation.query({ id: next.escalation.id })).steps.find((step) => step.action === 'human_answer')?.note).toBe('hunter2');
  });
});

describe('OpenAPI', () => {
  it('describes the escalation delivery with its answer_url', async () => {
    const document = (await (await fetch(`${test.url}/v1/openapi.json`)).json()) as any;
    const body = document.components.schemas.EscalationDelivery;
    expect(body.required).toEqual(['escalation', 'resolve_url', 'token', 'answer_url']);
    expect(body.properties.answer_url.description).toContain('#anslnk_');
  });
});

describe('console live actions', () => {
  it('shows an escalation with its task, watches, takes over and releases, audited with the operator', async () => {
    const parked = await park('Which plan?', 'ask a human "Confirm?" then return the text of "#echo"');
    const operator = await signedIn();
    const detail = await operator.escalation.query({ id: parked.escalationId });
    expect(detail).toMatchObject({ escalation: { reason: 'Which plan?', status: 'pending' }, task: { id: parked.task, status: 'needs_human' }, device: { id: parked.device, status: 'active' }, next_escalation_id: null });
    expect(detail.organization.name).toBe('Test org');
    expect(await failure(operator.escalation.query({ id: 'esc_00000000-0000-4000-8000-000000000000' }))).toMatchObject({ status: 404, code: 'escalation_not_found' });

    const watch = await operator.watchDevice.mutate({ device_id: parked.device });
    expect(watch).toMatchObject({ mode: 'watch', device_id: parked.device });
    expect(watch.session_token).toMatch(/^sestok_/);
    const held = await operator.takeOverDevice.mutate({ device_id: parked.device, reason: 'typing the name' });
    expect(held.task_id).toBe(parked.task);
    // One hold per device, as on /v1: the API's control session cannot take it meanwhile.
    const apiSession = await api('POST', `/v1/devices/${parked.device}/sessions`, { mode: 'control' });
    expect((await api('POST', `/v1/sessions/${apiSession.body.id}/takeover`, {})).status).toBe(409);
    // An operator releases only sessions operators minted.
    expect(await failure(operator.releaseTakeover.mutate({ session_id: apiSession.body.id }))).toMatchObject({ status: 404, code: 'session_not_found' });

    const deviceView = await operator.device.query({ id: parked.device });
    expect(deviceView).toMatchObject({ held: true, task: { id: parked.task, status: 'needs_human' }, pending_escalation_id: parked.escalationId });

    expect(await operator.releaseTakeover.mutate({ session_id: held.session.id })).toMatchObject({ resumed: true, task_id: parked.task });
    // The task runs again and asks its next question: the page links to it.
    await waitForTaskEnd(api, parked.task, 20_000, ['needs_human']);
    await expect.poll(async () => (await operator.escalation.query({ id: parked.escalationId })).next_escalation_id, { timeout: 10_000 }).not.toBeNull();

    const audit = await test.service.services.db.select().from(auditEvents).where(eq(auditEvents.orgId, tenant.orgId));
    for (const [action, resourceId] of [
      ['operator.session.created', watch.id],
      ['operator.session.created', held.session.id],
      ['operator.session.takeover', held.session.id],
      ['operator.session.released', held.session.id],
    ] as const) {
      const entry = audit.find((event) => event.action === action && event.resourceId === resourceId);
      expect(entry, `${action} ${resourceId}`).toMatchObject({ actor: 'system', details: expect.objectContaining({ via: 'console', operator: 'Ada' }) });
    }
    // A page that closes ends its sessions; only operators' sessions are the console's to end.
    expect(await operator.endSession.mutate({ session_id: watch.id })).toEqual({ ended: true });
    const [ended] = await test.service.services.db.select().from(sessions).where(eq(sessions.id, parsePublicId('session', watch.id)!));
    expect(ended!.revokedAt).not.toBeNull();
    expect(await failure(operator.endSession.mutate({ session_id: watch.id }))).toMatchObject({ status: 410, code: 'session_expired' });
    expect(await failure(operator.endSession.mutate({ session_id: apiSession.body.id }))).toMatchObject({ status: 404, code: 'session_not_found' });

    // Bad input is a 400 naming the field, and changes nothing.
    expect(await failure(operator.takeOverDevice.mutate({ device_id: 5 as unknown as string }))).toMatchObject({ status: 400, code: 'invalid_request', param: 'device_id' });
    expect(await failure(operator.watchDevice.mutate({ device_id: 'dev_nope' }))).toMatchObject({ status: 404, code: 'device_not_found' });
    expect(await failure(client().openAnswerLink.mutate({ escalation_id: parked.escalationId, secret: 'x'.repeat(201) }))).toMatchObject({ status: 400, code: 'invalid_request', param: 'secret' });

    // Signed out, none of it.
    expect(await failure(client().watchDevice.mutate({ device_id: parked.device }))).toMatchObject({ status: 401, code: 'console_sign_in_required' });
  });
});

describe('answer_url throttle', () => {
  it('refuses an address with 429 once it failed too often, the right secret included', async () => {
    const parked = await park('Guess?');
    let status = 0;
    for (let attempt = 0; attempt <= AUTH_FAILURE_LIMIT && status !== 429; attempt += 1) {
      status = (await failure(client().openAnswerLink.mutate({ escalation_id: parked.escalationId, secret: `anslnk_${'x'.repeat(43)}` }))).status;
    }
    expect(status).toBe(429);
    expect((await failure(client().openAnswerLink.mutate({ escalation_id: parked.escalationId, secret: parked.secret }))).status).toBe(429);
  });
});
