import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { escalations, events } from '../../db/schema';
import { rotateEscalationSigningSecret } from '../../server/domain/orgs/operator-admin';
import { hashSecret } from '../../server/domain/secret-hash';
import { verifyWebhook, WebhookVerificationError } from '../../server/domain/webhooks/verify-webhook';
import { parsePublicId } from '../../server/domain/ids';
import { DeviceTracker } from '../support/device-tracker';
import { expireEscalationNow } from '../support/escalation-clock';
import { apiClient, type ApiCall } from '../support/http';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';
import { startWebhookReceiver, type ReceivedDelivery, type WebhookReceiver } from '../support/webhook-receiver';

// Escalations end to end: a task that asks a human parks, its escalation is POSTed to the
// organization's escalation URL with a resolve bearer, and the callback resumes or fails
// the task; unanswered ones expire. Real server, PostgreSQL, Chromium and receiver.

const PUBLIC_URL = 'https://operator.example';
// Long enough that a loaded machine answers before expiry; the expiry test brings its
// escalation's expiry forward rather than wait it out.
const TTL_SECS = 60;

let test: TestService;
let tenant: TestTenant;
let pages: TaskPages;
let api: ApiCall;
let key: string;
let receiver: WebhookReceiver;
/** Answers the next deliveries with these statuses, then 200. */
const scriptedStatuses: number[] = [];
const devices = new DeviceTracker(() => api);

interface EscalationDelivery {
  escalation: Record<string, any>;
  resolve_url: string;
  token: string;
}

beforeAll(async () => {
  pages = await startTaskPages();
  receiver = await startWebhookReceiver((res) => res.writeHead(scriptedStatuses.shift() ?? 200).end());
  test = await startTestService({
    OPERATOR_PUBLIC_URL: PUBLIC_URL,
    OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
    OPERATOR_WEBHOOK_RETRY_SCHEDULE_MS: '100',
    OPERATOR_ESCALATION_TTL_SECS: String(TTL_SECS),
  });
  tenant = await createTenant(test, { escalationUrl: receiver.url });
  key = await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:escalations:read', 'operator:audit:read']);
  api = apiClient(test.url, key);
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await receiver?.close();
  await pages?.close();
});

/** Submits a task that asks a human, waits for it to park, and returns the delivery its escalation made (parsed, and as received). */
async function parkWithQuestion(question: string, then = 'return the title'): Promise<{ task: string; device: string; delivery: EscalationDelivery; received: ReceivedDelivery }> {
  const device = await devices.create(tenant.spaceId);
  const before = receiver.received.length;
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${pages.url('/plain')} then ask a human "${question}" then ${then}` });
  expect(submitted.status).toBe(202);
  await waitForTaskEnd(api, submitted.body.id, 20_000, ['needs_human']);
  const [received] = (await receiver.waitFor(before + 1)).slice(before);
  return { task: submitted.body.id, device, delivery: JSON.parse(received!.rawBody.toString('utf8')), received: received! };
}

/** The escalation's row once its delivery is recorded (the receiver answers before the worker records it). */
async function deliveredRow(publicId: string) {
  const id = parsePublicId('escalation', publicId)!;
  const deadline = Date.now() + 5_000;
  for (;;) {
    const [row] = await test.service.services.db.select().from(escalations).where(eq(escalations.id, id));
    if (row!.deliveryStatus !== 'pending' || Date.now() > deadline) return row!;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function resolveCall(delivery: EscalationDelivery, body?: unknown, bearer = delivery.token) {
  return apiClient(test.url, bearer)('POST', `/v1/escalations/${delivery.escalation.id}/resolve`, body);
}

describe('escalations', () => {
  it('POSTs a parked task’s escalation to the organization’s URL with a resolve URL and a bearer stored only as a hash', async () => {
    const { task, device, delivery } = await parkWithQuestion('Which plan should I pick?');
    expect(delivery.escalation).toMatchObject({
      object: 'escalation',
      attempt: 1,
      kind: 'question',
      reason: 'Which plan should I pick?',
      status: 'pending',
      subject_kind: 'task',
      urgency: 'normal',
      task_id: task,
      device_id: device,
      answer: null,
      resolved_at: null,
    });
    expect(delivery.escalation.id).toMatch(/^esc_[0-9a-f-]{36}$/);
    expect(Date.parse(delivery.escalation.expires_at) - Date.parse(delivery.escalation.created_at)).toBe(TTL_SECS * 1000);
    expect(delivery.resolve_url).toBe(`${PUBLIC_URL}/v1/escalations/${delivery.escalation.id}/resolve`);
    expect(delivery.token).toMatch(/^esctok_[A-Za-z0-9_-]{43}$/);

    const db = test.service.services.db;
    const row = await deliveredRow(delivery.escalation.id);
    expect(row!.tokenHashes).toEqual([hashSecret(delivery.token)]);
    expect(row!.deliveryStatus).toBe('succeeded');
    // The bearer itself is nowhere in the database.
    const [dump] = await db.execute<{ found: boolean }>(
      sql`select exists (select 1 from escalations e where e::text like ${`%${delivery.token}%`})
           or exists (select 1 from audit_events a where a::text like ${`%${delivery.token}%`})
           or exists (select 1 from events v where v::text like ${`%${delivery.token}%`}) as found`,
    );
    expect(dump!.found).toBe(false);

    const listed = await api('GET', `/v1/escalations?task_id=${task}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([delivery.escalation]);
    expect((await api('GET', `/v1/escalations/${delivery.escalation.id}`)).body).toEqual(delivery.escalation);
    const created = await db.select().from(events).where(eq(events.type, 'operator.escalation.created.v1'));
    expect(created.map((event) => (event.envelope as any).data.object.id)).toContain(delivery.escalation.id);
  });

  it('signs each delivery like a webhook, with the organization’s escalation signing secret, from the next one on after a rotation', async () => {
    const { delivery, received } = await parkWithQuestion('Is this signed?');
    const header = received.headers['x-service-signature'];
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    // What a receiver runs on the bytes it got: the package's own verifyWebhook.
    expect(verifyWebhook(received.rawBody, header as string, tenant.escalationSigningSecret!, { delivery: 'escalation' })).toEqual(delivery);

    const { escalation_signing_secret: rotated } = await rotateEscalationSigningSecret(test.service.services.db, tenant.orgId);
    const next = await parkWithQuestion('And after the rotation?');
    const nextHeader = next.received.headers['x-service-signature'] as string;
    expect(verifyWebhook(next.received.rawBody, nextHeader, rotated, { delivery: 'escalation' })).toEqual(next.delivery);
    const withOldSecret = (() => {
      try {
        return verifyWebhook(next.received.rawBody, nextHeader, tenant.escalationSigningSecret!, { delivery: 'escalation' });
      } catch (error) {
        return error;
      }
    })();
    expect(withOldSecret).toBeInstanceOf(WebhookVerificationError);
    expect((withOldSecret as WebhookVerificationError).reason).toBe('signature_mismatch');
    // Only the organization's row keeps it: no audit detail, no event, no escalation.
    for (const secret of [tenant.escalationSigningSecret!, rotated]) {
      const [dump] = await test.service.services.db.execute<{ found: boolean }>(
        sql`select exists (select 1 from audit_events a where a::text like ${`%${secret}%`})
             or exists (select 1 from events v where v::text like ${`%${secret}%`})
             or exists (select 1 from escalations e where e::text like ${`%${secret}%`}) as found`,
      );
      expect(dump!.found).toBe(false);
    }
    tenant.escalationSigningSecret = rotated;
  });

  it('refuses a missing, wrong or foreign bearer with 401 invalid_escalation_token, before reading the body', async () => {
    // The foreign one first: the escalation checked at the end must still be pending then,
    // within TTL_SECS of its creation, however long a loaded host takes to park a task.
    const other = await parkWithQuestion('And this one?');
    const { delivery } = await parkWithQuestion('May I continue?');
    const attempts = [
      await apiClient(test.url)('POST', `/v1/escalations/${delivery.escalation.id}/resolve`, {}),
      await resolveCall(delivery, {}, `esctok_${'A'.repeat(43)}`),
      await resolveCall(delivery, {}, key),
      await resolveCall(delivery, {}, other.delivery.token),
      await resolveCall(delivery, 'not json', 'wrong'),
      await apiClient(test.url, delivery.token)('POST', '/v1/escalations/esc_not-an-id/resolve', {}),
    ];
    for (const response of attempts) {
      expect({ status: response.status, code: response.body.error.code }).toEqual({ status: 401, code: 'invalid_escalation_token' });
      expect(JSON.stringify(response.body)).not.toContain(delivery.token);
    }
    const document = await (await fetch(`${test.url}/v1/openapi.json`)).json();
    expect(document.paths['/escalations/{id}/resolve'].post.security).toEqual([{ escalationBearer: [] }]);
    const badBody = await resolveCall(delivery, { answer: 42 });
    expect(badBody.status).toBe(400);
    expect(badBody.body.error).toMatchObject({ code: 'invalid_request', param: 'answer' });
    expect((await api('GET', `/v1/escalations/${delivery.escalation.id}`)).body.status).toBe('pending');
  });

  it('resumes the task with the human’s answer in its steps, once: a second resolve is applied: false', async () => {
    const { task, delivery } = await parkWithQuestion('Which plan should I pick?');
    const resolved = await resolveCall(delivery, { answer: 'The Pro plan', resolved_by: 'alice@example.com', source: 'slack' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toEqual({ applied: true, id: delivery.escalation.id, object: 'escalation', status: 'resolved' });

    const done = await waitForTaskEnd(api, task);
    expect(done).toMatchObject({ status: 'succeeded', result: 'Plain' });
    const steps = (await readStream(`${test.url}/v1/tasks/${task}/events`, key)).frames.filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!));
    expect(steps.map((step) => [step.type, step.action, step.note])).toContainEqual(['message', 'human_answer', 'The Pro plan']);
    const escalation = (await api('GET', `/v1/escalations/${delivery.escalation.id}`)).body;
    expect(escalation).toMatchObject({ status: 'resolved', answer: 'The Pro plan', cleared: true, resolved_by: 'alice@example.com' });
    expect(Date.parse(escalation.resolved_at)).toBeGreaterThan(Date.parse(escalation.created_at));

    const again = await resolveCall(delivery, { answer: 'Something else' });
    expect(again.body).toEqual({ applied: false, id: delivery.escalation.id, object: 'escalation', status: 'resolved' });
    expect((await api('GET', `/v1/escalations/${delivery.escalation.id}`)).body.answer).toBe('The Pro plan');

    const audit = await api('GET', `/v1/audit?resource_id=${delivery.escalation.id}`);
    expect(audit.body.data.map((entry: any) => entry.action).sort()).toEqual(['operator.escalation.created', 'operator.escalation.resolved']);
    expect(JSON.stringify(audit.body)).not.toContain('The Pro plan');
  });

  it('takes resolved_by from source, then a constant, and defaults cleared to true with an empty body', async () => {
    const first = await parkWithQuestion('One?');
    expect((await resolveCall(first.delivery, { source: 'pagerduty' })).body.applied).toBe(true);
    expect((await api('GET', `/v1/escalations/${first.delivery.escalation.id}`)).body).toMatchObject({ resolved_by: 'pagerduty', cleared: true, answer: null });
    const second = await parkWithQuestion('Two?');
    expect((await resolveCall(second.delivery)).body.applied).toBe(true);
    expect((await api('GET', `/v1/escalations/${second.delivery.escalation.id}`)).body).toMatchObject({ resolved_by: 'escalation_destination', cleared: true });
    expect(await waitForTaskEnd(api, second.task)).toMatchObject({ status: 'succeeded' });
  });

  it('fails the task with escalation_not_cleared when the human reports the wall still standing', async () => {
    const { task, device, delivery } = await parkWithQuestion('Can you solve the captcha?');
    expect((await resolveCall(delivery, { cleared: false })).body).toMatchObject({ applied: true, status: 'resolved' });
    const ended = await waitForTaskEnd(api, task);
    expect(ended.result).toEqual({ error: 'escalation_not_cleared', detail: 'The human who answered the request for help could not clear what stopped the task.' });
    expect((await api('GET', `/v1/devices/${device}`)).body.current_task_id).toBeNull();
  });

  it('expires an unanswered escalation, failing its task with escalation_expired and freeing the slot', async () => {
    const { task, device, delivery } = await parkWithQuestion('Anyone there?');
    await expireEscalationNow(test.service.services.db, delivery.escalation.id);
    const ended = await waitForTaskEnd(api, task, 15_000);
    expect(ended.result).toEqual({ error: 'escalation_expired', detail: 'No human answered the request for help before it expired.' });
    expect((await api('GET', `/v1/escalations/${delivery.escalation.id}`)).body.status).toBe('expired');
    expect((await api('GET', `/v1/devices/${device}`)).body.current_task_id).toBeNull();
    const expired = await test.service.services.db.select().from(events).where(eq(events.type, 'operator.escalation.expired.v1'));
    expect(expired.map((event) => (event.envelope as any).data.object.id)).toContain(delivery.escalation.id);
    expect((await resolveCall(delivery, { answer: 'late' })).body).toEqual({ applied: false, id: delivery.escalation.id, object: 'escalation', status: 'expired' });
  });

  it('cancels the escalation of a task canceled while parked', async () => {
    const { task, delivery } = await parkWithQuestion('Still needed?');
    expect((await api('POST', `/v1/tasks/${task}/cancel`)).status).toBe(202);
    expect((await api('GET', `/v1/escalations/${delivery.escalation.id}`)).body.status).toBe('canceled');
    expect((await resolveCall(delivery, {})).body).toMatchObject({ applied: false, status: 'canceled' });
    expect((await api('GET', `/v1/tasks/${task}`)).body.status).toBe('canceled');
  });

  it('retries a failed delivery with a fresh bearer, and every bearer sent resolves', async () => {
    scriptedStatuses.push(500);
    const before = receiver.received.length;
    const { task, delivery: first } = await parkWithQuestion('Retry me?');
    const [, retried] = (await receiver.waitFor(before + 2)).slice(before).map((received) => JSON.parse(received.rawBody.toString('utf8')) as EscalationDelivery);
    expect(retried!.escalation.id).toBe(first.escalation.id);
    expect(retried!.token).not.toBe(first.token);
    const row = await deliveredRow(first.escalation.id);
    expect(row).toMatchObject({ deliveryStatus: 'succeeded', deliveryAttempts: 2, deliveryLastError: null });
    expect((await resolveCall(first, { answer: 'yes' })).body.applied).toBe(true);
    expect(await waitForTaskEnd(api, task)).toMatchObject({ status: 'succeeded' });
  });

  it('lists escalations newest first, filtered by status and task, and refuses a malformed task_id', async () => {
    const pending = await api('GET', '/v1/escalations?status=resolved&limit=2');
    expect(pending.status).toBe(200);
    expect(pending.body.data).toHaveLength(2);
    expect(pending.body.data.every((escalation: any) => escalation.status === 'resolved')).toBe(true);
    expect(Date.parse(pending.body.data[0].created_at)).toBeGreaterThanOrEqual(Date.parse(pending.body.data[1].created_at));
    const next = await api('GET', `/v1/escalations?status=resolved&limit=2&cursor=${encodeURIComponent(pending.body.next_cursor)}`);
    expect(next.body.data.map((escalation: any) => escalation.id)).not.toContain(pending.body.data[0].id);
    expect((await api('GET', `/v1/escalations?limit=2&cursor=${encodeURIComponent(pending.body.next_cursor)}`)).body.error.code).toBe('invalid_cursor');
    const malformed = await api('GET', '/v1/escalations?task_id=dev_123');
    expect({ status: malformed.status, param: malformed.body.error.param }).toEqual({ status: 400, param: 'task_id' });
    const spaceKey = await tenant.key(['operator:escalations:read'], [tenant.spaceId]);
    const spaceCall = apiClient(test.url, spaceKey);
    expect((await spaceCall('GET', '/v1/escalations')).body.error).toMatchObject({ code: 'invalid_request', param: 'space_id' });
    expect((await spaceCall('GET', `/v1/escalations?space_id=${tenant.spaceId}`)).body.data.length).toBeGreaterThan(0);
  });

  it('opens an escalation without delivering it when the organization has no escalation URL', async () => {
    const other = await createTenant(test);
    const otherKey = await other.key(['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:escalations:read']);
    const call = apiClient(test.url, otherKey);
    const device = await call('POST', '/v1/devices', { space_id: other.spaceId });
    expect(device.status).toBe(201);
    const submitted = await call('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: 'ask a human "Nobody listening?"' });
    const before = receiver.received.length;
    await waitForTaskEnd(call, submitted.body.id, 20_000, ['needs_human']);
    const listed = await call('GET', '/v1/escalations');
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ status: 'pending', task_id: submitted.body.id });
    const [row] = await test.service.services.db.select().from(escalations).where(eq(escalations.id, parsePublicId('escalation', listed.body.data[0].id)!));
    expect(row!.deliveryStatus).toBe('none');
    // Another organization's escalation is a 404 to this tenant's key.
    expect((await api('GET', `/v1/escalations/${listed.body.data[0].id}`)).body.error.code).toBe('escalation_not_found');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(receiver.received.length).toBe(before);
    expect((await call('DELETE', `/v1/devices/${device.body.id}`)).status).toBe(202);
  });
  it('fails a parked task with device_lost when its device is deleted, canceling its escalation', async () => {
    const { task, device, delivery } = await parkWithQuestion('Deleted under me?');
    expect((await api('DELETE', `/v1/devices/${device}`)).status).toBe(202);
    const ended = await waitForTaskEnd(api, task, 15_000);
    expect(ended.result).toMatchObject({ error: 'device_lost' });
    expect((await api('GET', `/v1/escalations/${delivery.escalation.id}`)).body.status).toBe('canceled');
  });

  // Last: the tenant helper holds the first server's database pool.
  it('keeps a pending escalation across a server restart and resolves it afterwards', async () => {
    const { task, delivery } = await parkWithQuestion('Across a restart?');
    await test.restart();
    expect((await resolveCall(delivery, { answer: 'yes' })).body.applied).toBe(true);
    // The browser outlived the server (a deploy): the task resumes on the page it parked on.
    expect(await waitForTaskEnd(api, task)).toMatchObject({ status: 'succeeded', result: 'Plain' });
  });

  it('fails a parked task with device_lost when its page did not survive a restart, rather than answer on another page', async () => {
    const { task, delivery } = await parkWithQuestion('After a Ctrl-C?');
    // Ctrl-C closes the browsers: the device comes back on a new browser, without the page.
    await test.restart('shutdown');
    expect(await waitForTaskEnd(api, task)).toMatchObject({ status: 'failed', result: { error: 'device_lost' } });
    expect((await resolveCall(delivery, { answer: 'yes' })).body.applied).toBe(false);
  });

});
