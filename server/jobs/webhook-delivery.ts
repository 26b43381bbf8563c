import { randomUUID } from 'node:crypto';
import { isDeliverableEventType } from '../domain/events/catalogue';
import { OUTBOX_CHANNEL } from '../domain/events/emit-event';
import { deliverWebhook } from '../domain/webhooks/deliver';
import {
  msUntilNextDue,
  prepareDeliveryClaim,
  recordFailure,
  recordSkipped,
  recordSuccesses,
  type ClaimedDelivery,
} from '../domain/webhooks/delivery-queue';
import { signPayload } from '../domain/webhooks/signature';
import type { Services } from '../services/services';
import { QueueWorker } from './queue-worker';
import type { Worker } from './worker';

// The lease outlives one attempt (bounded by the delivery timeout) by this much, which covers
// recording the outcome; only a dead instance's leases ever run out.
const LEASE_MARGIN_MS = 5_000;
// Retries and expired leases are found by polling; NOTIFY only announces new events, and a
// notification sent while the listening connection was down is lost. The worker sleeps until
// the next due delivery, and never longer than this.
const MAX_IDLE_MS = 1_000;
const USER_AGENT = 'browser-device-operator-webhooks/0.1.0';

/**
 * Calls `write` with every item submitted while the previous call ran: under load, one
 * statement records many outcomes; when idle, an item is written at once.
 */
function batchedWriter<T>(write: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let queue: Array<{ item: T; settle: (error?: unknown) => void }> = [];
  let writing = false;
  async function drain(): Promise<void> {
    writing = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await write(batch.map((entry) => entry.item));
        batch.forEach((entry) => entry.settle());
      } catch (error) {
        batch.forEach((entry) => entry.settle(error));
      }
    }
    writing = false;
  }
  return (item) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!writing) void drain();
    });
}

/**
 * Delivers the outbox: claims due deliveries (woken by NOTIFY on new events, and for retries
 * when the next one falls due), sends up to `config.webhooks.concurrency` at once, and
 * records each outcome. On stop it claims nothing more and lets the attempts in flight
 * finish and be recorded.
 */
export function webhookDeliveryWorker(services: Services): Worker {
  const { db, log, instanceId: owner } = services;
  const { timeoutMs, concurrency, allowPrivateDestinations, retryScheduleMs } = services.config.webhooks;
  const claimDueDeliveries = prepareDeliveryClaim(db, owner, timeoutMs + LEASE_MARGIN_MS);
  const recordSuccess = batchedWriter((deliveries: ClaimedDelivery[]) => recordSuccesses(db, deliveries));

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    // emitEvent only fans out deliverable types; this guards against a row written any other way.
    if (!delivery.endpointEnabled || !isDeliverableEventType(delivery.eventType)) {
      await recordSkipped(db, delivery);
      return;
    }
    const result = await deliverWebhook({
      url: delivery.url,
      body: delivery.body,
      headers: {
        'x-service-signature': signPayload(delivery.secret, delivery.body, Math.floor(Date.now() / 1000)),
        'x-service-event': delivery.eventType,
        'x-service-delivery': randomUUID(),
        'user-agent': USER_AGENT,
      },
      timeoutMs,
      allowPrivate: allowPrivateDestinations,
    });
    if (result.ok) await recordSuccess(delivery);
    else await recordFailure(db, delivery, result.lastError, { retryScheduleMs });
  }

  return new QueueWorker({
    name: 'webhook-delivery',
    concurrency,
    claim: claimDueDeliveries,
    work: attempt,
    pollMs: MAX_IDLE_MS,
    nextDueInMs: () => msUntilNextDue(db),
    // Refilled in batches: one claim for half the slots costs about what a claim for one
    // does, and a busy pipeline would otherwise claim once per completed attempt.
    refillAt: Math.ceil(concurrency / 2),
    wakeOn: (wake) => services.notifications.subscribe(OUTBOX_CHANNEL, { onNotify: wake, onReconnect: wake }),
    onError: services.databaseAvailability.reportingOthers((error) => log.error({ err: error }, 'webhook delivery pump failed')),
    onItemError: (delivery, error) => {
      if (!services.databaseAvailability.absorb(error)) log.error({ err: error, delivery: delivery.id }, 'webhook delivery could not be recorded');
    },
  });
}
