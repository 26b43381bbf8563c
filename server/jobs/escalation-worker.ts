import { randomUUID } from 'node:crypto';
import {
  claimDueEscalationDeliveries,
  recordEscalationDelivered,
  recordEscalationDeliveryFailed,
  type ClaimedEscalationDelivery,
} from '../domain/escalations/escalation-delivery';
import { expireOverdueEscalations } from '../domain/escalations/expire-escalations';
import { deliverWebhook } from '../domain/webhooks/deliver';
import { signPayload } from '../domain/webhooks/signature';
import type { Services } from '../services/services';
import { QueueWorker } from './queue-worker';
import { periodicWorker, type Worker } from './worker';

// Escalations are rare and wait for people: within a second is prompt enough for both the
// POST to the escalation URL and expiry, and costs an idle service two queries a second.
const TICK_MS = 1_000;
// Deliveries worked at once; the rest are claimed as those finish.
const CONCURRENCY = 16;
const LEASE_MARGIN_MS = 5_000;
const USER_AGENT = 'browser-device-operator-escalations/0.1.0';

/**
 * POSTs new escalations to their organization's escalation URL under the webhook delivery
 * rules: signed with the organization's escalation signing secret, destination checked
 * after DNS resolution, 10 s timeout, no redirects, retries on the webhook schedule until
 * the escalation is answered or expires.
 */
export function escalationDeliveryWorker(services: Services): Worker {
  const { db, log, instanceId: owner, config } = services;
  const { timeoutMs, allowPrivateDestinations, retryScheduleMs } = config.webhooks;

  async function deliver(delivery: ClaimedEscalationDelivery): Promise<void> {
    const result = await deliverWebhook({
      url: delivery.url,
      body: delivery.body,
      // Signed as webhooks are, at send time: a retry carries a fresh `t`.
      headers: {
        'x-service-signature': signPayload(delivery.signingSecret, delivery.body, Math.floor(Date.now() / 1000)),
        'x-service-delivery': randomUUID(),
        'user-agent': USER_AGENT,
      },
      timeoutMs,
      allowPrivate: allowPrivateDestinations,
    });
    if (result.ok) await recordEscalationDelivered(db, delivery);
    else await recordEscalationDeliveryFailed(db, delivery, result.lastError, { retryScheduleMs });
  }

  return new QueueWorker({
    name: 'escalation-delivery',
    concurrency: CONCURRENCY,
    claim: (limit) => claimDueEscalationDeliveries(db, owner, limit, timeoutMs + LEASE_MARGIN_MS, config.http.publicUrl),
    work: deliver,
    pollMs: TICK_MS,
    onError: services.databaseAvailability.reportingOthers((error) => log.error({ err: error }, 'escalation delivery claim failed')),
    onItemError: (delivery, error) => {
      if (!services.databaseAvailability.absorb(error)) log.error({ err: error, escalationId: delivery.id }, 'escalation delivery could not be recorded');
    },
  });
}

/** Expires escalations nobody answered in time, failing their tasks. */
export function escalationExpiry(services: Services): Worker {
  return periodicWorker(
    'escalation-expiry',
    TICK_MS,
    async () => {
      const expired = await expireOverdueEscalations(services.db, services.config.agent);
      if (expired > 0) services.log.info({ expired }, 'escalations expired unanswered; their tasks failed with escalation_expired');
    },
    services.databaseAvailability.reportingOthers((error) => services.log.error({ err: error }, 'escalation expiry failed')),
  );
}
