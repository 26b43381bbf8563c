import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { events, webhookDeliveries, webhookEndpoints } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { dbNow, dbNowPlus } from '../db-clock';
import { toPublicId } from '../ids';
import { systemActor } from '../keys/principal';
import { Lease, type LeaseClaim } from '../lease';
import type { DeliveryError } from './deliver';
import { abandonPendingDeliveries } from './endpoints';
import { nextAttemptDelayMs, shouldGiveUp } from './retry-schedule';

/** Spec: an endpoint is disabled after this many consecutive failed deliveries. */
export const AUTO_DISABLE_AFTER_FAILURES = 20;

const deliveryLease = new Lease(webhookDeliveries, {
  id: webhookDeliveries.id,
  owner: webhookDeliveries.leaseOwner,
  expiresAt: webhookDeliveries.leaseExpiresAt,
});
const pending = eq(webhookDeliveries.status, 'pending');

/** One attempt this instance holds the lease for. */
export interface ClaimedDelivery extends LeaseClaim {
  endpointId: string;
  /** Attempts already made before this one. */
  attempts: number;
  /** When the delivery was fanned out; retries stop 24 h after it. */
  createdAt: Date;
  url: string;
  secret: string;
  endpointEnabled: boolean;
  eventType: string;
  /** The envelope as stored, rendered by PostgreSQL: the same bytes on every attempt. */
  body: string;
}

/**
 * The claim of due deliveries for `owner`: called with a limit, it claims up to that many,
 * with what their attempts need from the endpoint and the event, in one statement. The lease
 * moves `next_attempt_at` to its own expiry: a claimed row is not due again until the lease
 * runs out, so an instance that died mid-attempt has its deliveries picked up by whoever
 * polls next, with no separate sweep. Prepared once per worker: it runs every few attempts,
 * and building the statement each time cost more than running it.
 */
export function prepareDeliveryClaim(db: Db, owner: string, leaseMs: number): (limit: number) => Promise<ClaimedDelivery[]> {
  const claimed = db.$with('claimed').as(
    deliveryLease
      .claim(db, {
        owner,
        leaseMs,
        limit: sql.placeholder('limit'),
        due: and(pending, lte(webhookDeliveries.nextAttemptAt, dbNow())),
        orderBy: asc(webhookDeliveries.nextAttemptAt),
        set: { nextAttemptAt: dbNowPlus(leaseMs) },
      })
      .returning({
        ...deliveryLease.claimFields,
        endpointId: webhookDeliveries.endpointId,
        eventId: webhookDeliveries.eventId,
        attempts: webhookDeliveries.attempts,
        createdAt: webhookDeliveries.createdAt,
      }),
  );
  const claim = db
    .with(claimed)
    .select({
      id: claimed.id,
      leaseOwner: claimed.leaseOwner,
      leaseToken: claimed.leaseToken,
      endpointId: claimed.endpointId,
      attempts: claimed.attempts,
      createdAt: claimed.createdAt,
      url: webhookEndpoints.url,
      secret: webhookEndpoints.secret,
      endpointEnabled: webhookEndpoints.enabled,
      eventType: events.type,
      body: sql<string>`${events.envelope}::text`,
    })
    .from(claimed)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, claimed.endpointId))
    .innerJoin(events, eq(events.id, claimed.eventId))
    .prepare('claim_due_webhook_deliveries');
  return (limit) => claim.execute({ limit });
}

/**
 * Milliseconds until the next pending delivery falls due (a lease expiry counts), by the
 * database's clock, which is the one `next_attempt_at` was set by; null when none waits.
 */
export async function msUntilNextDue(db: Db): Promise<number | null> {
  const [row] = await db.execute<{ wait_ms: number | null }>(sql`
    select (extract(epoch from min(next_attempt_at) - now()) * 1000)::float8 as wait_ms
    from webhook_deliveries where status = 'pending'`);
  return row?.wait_ms ?? null;
}

/**
 * 2xx answers, recorded together: the deliveries are done, and each endpoint's failure streak
 * ends. One statement for a batch keeps the commits per delivery far below one under load.
 */
export async function recordSuccesses(db: Db, deliveries: readonly ClaimedDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const done = db.$with('done').as(
    deliveryLease
      .release(db, deliveries, {
        set: { status: 'succeeded', attempts: sql`${webhookDeliveries.attempts} + 1`, completedAt: dbNow(), lastError: null },
        where: pending,
      })
      .returning({ endpointId: webhookDeliveries.endpointId }),
  );
  await db
    .with(done)
    .update(webhookEndpoints)
    .set({ failureCount: 0, lastSuccessAt: dbNow() })
    .where(inArray(webhookEndpoints.id, db.select({ endpointId: done.endpointId }).from(done)));
}

export interface FailureOptions {
  /** Replaces the default retry schedule (tests). */
  retryScheduleMs: readonly number[] | null;
  now?: Date;
}

/**
 * A failed attempt: schedule the next one (or give up when it would fall past 24 h after
 * the first), count the failure on the endpoint, and at the 20th consecutive failure disable
 * the endpoint with an audit event. One transaction, with the endpoint row locked by its
 * update, so concurrent failures cross the threshold exactly once.
 */
export async function recordFailure(
  db: Db,
  delivery: ClaimedDelivery,
  lastError: DeliveryError,
  { retryScheduleMs, now = new Date() }: FailureOptions,
): Promise<void> {
  const delayMs = nextAttemptDelayMs(delivery.attempts + 1, retryScheduleMs === null ? {} : { baseScheduleMs: retryScheduleMs });
  const giveUp = shouldGiveUp(delivery.createdAt, new Date(now.getTime() + delayMs));
  await db.transaction(async (tx) => {
    const [held] = await deliveryLease
      .release(tx, [delivery], {
        set: {
          attempts: sql`${webhookDeliveries.attempts} + 1`,
          lastError,
          status: giveUp ? 'failed' : 'pending',
          nextAttemptAt: dbNowPlus(delayMs),
          completedAt: giveUp ? dbNow() : null,
        },
        where: pending,
      })
      .returning({ endpointId: webhookDeliveries.endpointId });
    if (held === undefined) return;
    const [endpoint] = await tx
      .update(webhookEndpoints)
      .set({ failureCount: sql`${webhookEndpoints.failureCount} + 1`, lastError })
      .where(eq(webhookEndpoints.id, held.endpointId))
      .returning();
    if (endpoint === undefined) return;
    if (!endpoint.enabled) {
      // Disabled while this attempt was in flight: it must not be retried after a re-enable.
      await abandonPendingDeliveries(tx, endpoint.id, now);
      return;
    }
    if (endpoint.failureCount < AUTO_DISABLE_AFTER_FAILURES) return;
    await tx
      .update(webhookEndpoints)
      .set({ enabled: false, disabledAt: now, updatedAt: now })
      .where(eq(webhookEndpoints.id, endpoint.id));
    await abandonPendingDeliveries(tx, endpoint.id, now);
    await recordAudit(tx, systemActor(endpoint.orgId), {
      action: 'operator.webhook.disabled.v1',
      resourceType: 'webhook_endpoint',
      resourceId: toPublicId('webhookEndpoint', endpoint.id),
      spaceId: endpoint.spaceId,
      details: { failure_count: endpoint.failureCount, last_error: lastError },
    });
  });
}

/** A claimed delivery of an endpoint that is disabled: closed unsent (docs/webhooks.md). */
export async function recordSkipped(db: Db, delivery: ClaimedDelivery): Promise<void> {
  await deliveryLease.release(db, [delivery], { set: { status: 'failed', completedAt: new Date() }, where: pending });
}
