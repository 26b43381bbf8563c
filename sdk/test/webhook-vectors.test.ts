import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { signPayload } from '../../server/domain/webhooks/signature';
import { verifyWebhook, WebhookVerificationError } from '../src/verify-webhook';

// The signature vectors both SDKs are checked against: this SDK here, the Python SDK in
// sdk-python/tests/test_webhooks.py. A receiver in either language decides every case alike.

interface Vector {
  name: string;
  body: string;
  header: string | null;
  tolerance?: number;
  delivery?: 'event' | 'escalation';
  expect: { id?: string; escalation_id?: string; reason?: string };
}
const vectors = JSON.parse(readFileSync(path.join(import.meta.dirname, 'webhook-vectors.json'), 'utf8')) as { secret: string; now: number; cases: Vector[] };

function outcome(vector: Vector): Vector['expect'] {
  try {
    const options = { now: new Date(vectors.now * 1000), toleranceSecs: vector.tolerance ?? 300 };
    if (vector.delivery === 'escalation') return { escalation_id: verifyWebhook(vector.body, vector.header ?? undefined, vectors.secret, { ...options, delivery: 'escalation' }).escalation.id };
    return { id: verifyWebhook(vector.body, vector.header ?? undefined, vectors.secret, options).id };
  } catch (error) {
    if (error instanceof WebhookVerificationError) return { reason: error.reason };
    throw error;
  }
}

describe('the webhook signature vectors', () => {
  it('are what the service signs', () => {
    const valid = vectors.cases.find((vector) => vector.name === 'valid envelope')!;
    expect(valid.header).toBe(signPayload(vectors.secret, valid.body, vectors.now));
  });

  it.each(vectors.cases.map((vector) => [vector.name, vector] as const))('%s', (_, vector) => {
    expect(outcome(vector)).toEqual(vector.expect);
  });
});
