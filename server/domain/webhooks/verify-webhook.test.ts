import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signPayload } from './signature';
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationReason } from './verify-webhook';

const secret = generateWebhookSecret();
const now = new Date('2026-11-22T10:00:00.000Z');
const nowSecs = Math.floor(now.getTime() / 1000);
const envelope = {
  id: 'evt_2f1c7a52-9d7e-4a57-8a55-0f2f3f0e6c11',
  object: 'event',
  type: 'operator.task.succeeded.v1',
  created_at: '2026-11-22T09:59:59.000Z',
  api_version: '0.1.0',
  org_id: 'org_1',
  space_id: null,
  data: { object: { id: 'task_1', object: 'task', status: 'succeeded' } },
};
// Deliberately unusual spacing: the MAC must cover these bytes, not a re-serialization.
const body = JSON.stringify(envelope, null, 1);

function reasonOf(run: () => unknown): WebhookVerificationReason | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  return undefined;
}

describe('verifyWebhook', () => {
  it('returns the envelope of a correctly signed body (string or Buffer)', () => {
    const header = signPayload(secret, body, nowSecs);
    expect(verifyWebhook(body, header, secret, { now })).toEqual(envelope);
    expect(verifyWebhook(Buffer.from(body), header, secret, { now })).toEqual(envelope);
  });

  it('rejects a tampered body', () => {
    const header = signPayload(secret, body, nowSecs);
    const tampered = body.replace('succeeded', 'failed');
    expect(reasonOf(() => verifyWebhook(tampered, header, secret, { now }))).toBe('signature_mismatch');
    expect(reasonOf(() => verifyWebhook(JSON.stringify(envelope), header, secret, { now }))).toBe(
      'signature_mismatch',
    );
  });

  it('rejects a body signed with another secret, or with the secret lacking its prefix', () => {
    const header = signPayload(generateWebhookSecret(), body, nowSecs);
    expect(reasonOf(() => verifyWebhook(body, header, secret, { now }))).toBe('signature_mismatch');
    const unprefixed = signPayload(secret.slice('whsec_'.length), body, nowSecs);
    expect(reasonOf(() => verifyWebhook(body, unprefixed, secret, { now }))).toBe('signature_mismatch');
  });

  it('rejects a timestamp more than the tolerance in the past or the future', () => {
    for (const offset of [-301, 301, -86_400, 86_400]) {
      const header = signPayload(secret, body, nowSecs + offset);
      expect(reasonOf(() => verifyWebhook(body, header, secret, { now }))).toBe('timestamp_out_of_tolerance');
    }
    for (const offset of [-300, 300]) {
      const header = signPayload(secret, body, nowSecs + offset);
      expect(verifyWebhook(body, header, secret, { now }).id).toBe(envelope.id);
    }
  });

  it('honours a custom tolerance', () => {
    const header = signPayload(secret, body, nowSecs - 20);
    expect(reasonOf(() => verifyWebhook(body, header, secret, { now, toleranceSecs: 10 }))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('does not compare a forged timestamp: changing t breaks the MAC', () => {
    const header = signPayload(secret, body, nowSecs - 1000).replace(`t=${nowSecs - 1000}`, `t=${nowSecs}`);
    expect(reasonOf(() => verifyWebhook(body, header, secret, { now }))).toBe('signature_mismatch');
  });

  it('accepts several v1 values in any order, and ignores unknown schemes', () => {
    const valid = signPayload(secret, body, nowSecs).split(',v1=')[1]!;
    const other = 'a'.repeat(64);
    const headers = [
      `t=${nowSecs},v1=${other},v1=${valid}`,
      `v1=${valid},t=${nowSecs}`,
      ` v0=zzz , v1=${other} ,t=${nowSecs}, v1=${valid.toUpperCase()} `,
    ];
    for (const header of headers) expect(verifyWebhook(body, header, secret, { now }).id).toBe(envelope.id);
  });

  it('rejects missing and malformed headers', () => {
    expect(reasonOf(() => verifyWebhook(body, undefined, secret, { now }))).toBe('missing_header');
    expect(reasonOf(() => verifyWebhook(body, '  ', secret, { now }))).toBe('missing_header');
    const valid = signPayload(secret, body, nowSecs).split(',v1=')[1]!;
    const malformed = [
      'garbage',
      `v1=${valid}`,
      `t=${nowSecs}`,
      `t=${nowSecs},v1=${valid.slice(2)}`,
      `t=${nowSecs},v1=${'g'.repeat(64)}`,
      `t=abc,v1=${valid}`,
      `t=-5,v1=${valid}`,
      `t=${nowSecs},t=${nowSecs},v1=${valid}`,
      `t=${nowSecs};v1=${valid}`,
    ];
    for (const header of malformed) {
      expect(reasonOf(() => verifyWebhook(body, header, secret, { now })), header).toBe('malformed_header');
    }
  });

  it('rejects a correctly signed body that is not an envelope', () => {
    for (const raw of ['not json', '[]', '{"id":"evt_1"}']) {
      const header = signPayload(secret, raw, nowSecs);
      expect(reasonOf(() => verifyWebhook(raw, header, secret, { now }))).toBe('invalid_payload');
    }
  });

  it('returns an escalation delivery when told to expect one, and refuses each kind of body as the other', () => {
    const escalation = JSON.stringify({ escalation: { id: 'esc_1', object: 'escalation' }, resolve_url: 'https://x/v1/escalations/esc_1/resolve', token: 'esctok_x' });
    const escalationHeader = signPayload(secret, escalation, nowSecs);
    expect(verifyWebhook(escalation, escalationHeader, secret, { now, delivery: 'escalation' }).escalation.id).toBe('esc_1');
    expect(reasonOf(() => verifyWebhook(escalation, escalationHeader, secret, { now }))).toBe('invalid_payload');
    expect(reasonOf(() => verifyWebhook(body, signPayload(secret, body, nowSecs), secret, { now, delivery: 'escalation' }))).toBe('invalid_payload');
    expect(reasonOf(() => verifyWebhook(escalation, escalationHeader, generateWebhookSecret(), { now, delivery: 'escalation' }))).toBe('signature_mismatch');
  });

  it('uses the clock when no time is given', () => {
    const header = signPayload(secret, body, Math.floor(Date.now() / 1000));
    expect(verifyWebhook(body, header, secret).id).toBe(envelope.id);
  });
});
