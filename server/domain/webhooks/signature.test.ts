import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signPayload } from './signature';

describe('signPayload', () => {
  it('is HMAC-SHA256 keyed with the whole secret over "<t>.<raw body>", lowercase hex', () => {
    const secret = 'whsec_test';
    const body = '{"id":"evt_1","created_at":"2026-11-22T10:00:00.000Z"}';
    const expected = createHmac('sha256', 'whsec_test').update(`1700000000.${body}`).digest('hex');
    expect(signPayload(secret, body, 1_700_000_000)).toBe(`t=1700000000,v1=${expected}`);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('signs the same bytes alike whether given a string or a Buffer', () => {
    const body = '{"name":"caf\u00e9"}';
    expect(signPayload('whsec_x', Buffer.from(body, 'utf8'), 1)).toBe(signPayload('whsec_x', body, 1));
  });

  it('refuses a timestamp that is not a whole number of seconds', () => {
    expect(() => signPayload('whsec_x', '{}', 1.5)).toThrow(RangeError);
  });
});

describe('generateWebhookSecret', () => {
  it('is whsec_ plus 32 random bytes in base64url', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64url')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });
});
