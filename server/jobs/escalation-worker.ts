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
import { periodicWorker, type Worker } from './worker';

// Escalations are rare and wait for people: a one-second tick is prompt enough for both
// the POST to the escalation URL and expiry, and costs an idle service two queries.
const TICK_MS = 1_000;
// Deliveries claimed per tick; the rest are claimed on the next one.
const CLAIM_LIMIT = 16;
const LEASE_MARGIN_MS = 5_000;
const USER_AGENT = 'browser-device-operator-escalations/0.1.0';

/**
 * Expires escalations nobody answered in time (failing their tasks) and POSTs new ones
 * to their organization's escalation URL under the webhook delivery rules: signed with
 * the organization's escalation signing secret, destination checked after DNS
 * resolution, 10 s timeout, no redirects, retries on the webhook schedule until the
 * escalation is answered or expires.
 */
export function escalationWorker(services: Services): Worker {
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

  return periodicWorker(
    'escalations',
    TICK_MS,
    async () => {
      const expired = await expireOverdueEscalations(db, config.agent);
      if (expired > 0) log.info({ expired }, 'escalations expired unanswered; their tasks failed with escalation_expired');
      const claimed = await claimDueEscalationDeliveries(db, owner, CLAIM_LIMIT, timeoutMs + LEASE_MARGIN_MS, config.http.publicUrl);
      await Promise.all(
        claimed.map((delivery) =>
          // The lease stays on an error, so the attempt is made again once it runs out.
          deliver(delivery).catch(services.databaseAvailability.reportingOthers((error) => log.error({ err: error, escalationId: delivery.id }, 'escalation delivery could not be recorded'))),
        ),
      );
    },
    services.databaseAvailability.reportingOthers((error) => log.error({ err: error }, 'escalation sweep failed')),
  );
}
