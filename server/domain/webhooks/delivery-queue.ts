import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { webhookDeliveries, webhookEndpoints } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { dbNowPlus } from '../db-clock';
import { toPublicId } from '../ids';
import { systemActor } from '../keys/principal';
import type { DeliveryError } from './deliver';
import { abandonPendingDeliveries } from './endpoints';
import { nextAttemptDelayMs, shouldGiveUp } from './retry-schedule';

/** Spec: an endpoint is disabled after this many consecutive failed deliveries. */
export const AUTO_DISABLE_AFTER_FAILURES = 20;

/** One attempt this instance holds the lease for. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  /** Attempts already made before this one. */
  attempts: number;
  /** When the delivery was fanned out; retries stop 24 h after it. */
  createdAt: Date;
  /** The lease expiry exactly as stored, as text: it identifies this claim. */
  leaseToken: string;
  url: string;
  secret: string;
  endpointEnabled: boolean;
  eventType: string;
  /** The envelope as stored, rendered by PostgreSQL: the same bytes on every attempt. */
  body: string;
}

interface ClaimRow extends Record<string, unknown> {
  id: string;
  endpoint_id: string;
  attempts: number;
  created_ms: number;
  lease_token: string;
  url: string;
  secret: string;
  enabled: boolean;
  type: string;
  body: string;
}

/**
 * Claims up to `limit` due deliveries for `owner`. `SKIP LOCKED` lets instances claim side
 * by side without waiting on each other, and the lease moves `next_attempt_at` to its own
 * expiry: a claimed row is not due again until the lease runs out, so an instance that died
 * mid-attempt has its deliveries picked up by whoever polls next, with no separate sweep.
 */
export async function claimDueDeliveries(db: Db, owner: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const rows = await db.execute<ClaimRow>(sql`
    with due as (
      select id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= now()
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    update webhook_deliveries delivery
    set lease_owner = ${owner},
        lease_expires_at = ${dbNowPlus(leaseMs)},
        next_attempt_at = ${dbNowPlus(leaseMs)}
    from due, webhook_endpoints endpoint, events event
    where delivery.id = due.id and endpoint.id = delivery.endpoint_id and event.id = delivery.event_id
    returning delivery.id, delivery.endpoint_id, delivery.attempts,
              (extract(epoch from delivery.created_at) * 1000)::float8 as created_ms,
              delivery.lease_expires_at::text as lease_token,
              endpoint.url, endpoint.secret, endpoint.enabled, event.type, event.envelope::text as body`);
  return rows.map((row) => ({
    id: row.id,
    endpointId: row.endpoint_id,
    attempts: row.attempts,
    createdAt: new Date(row.created_ms),
    leaseToken: row.lease_token,
    url: row.url,
    secret: row.secret,
    endpointEnabled: row.enabled,
    eventType: row.type,
    body: row.body,
  }));
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

// Matching the lease expiry as well as the owner pins the update to this claim: if the lease
// ran out and the row was claimed again, a late result of the old attempt changes nothing.
function heldBy(delivery: ClaimedDelivery, owner: string) {
  return sql`id = ${delivery.id} and status = 'pending' and lease_owner = ${owner} and lease_expires_at = ${delivery.leaseToken}::timestamptz`;
}

/**
 * 2xx answers, recorded together: the deliveries are done, and each endpoint's failure streak
 * ends. One statement for a batch keeps the commits per delivery far below one under load.
 */
export async function recordSuccesses(db: Db, owner: string, deliveries: readonly ClaimedDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  // Lists travel as text: uuids and PostgreSQL timestamps never contain a comma.
  const ids = deliveries.map((delivery) => delivery.id).join(',');
  const tokens = deliveries.map((delivery) => delivery.leaseToken).join(',');
  await db.execute(sql`
    with held as (
      select * from unnest(string_to_array(${ids}, ',')::uuid[], string_to_array(${tokens}, ',')::timestamptz[]) as held(id, lease_expires_at)
    ), done as (
      update webhook_deliveries delivery
      set status = 'succeeded', attempts = attempts + 1, completed_at = now(), last_error = null,
          lease_owner = null, lease_expires_at = null
      from held
      where delivery.id = held.id and delivery.status = 'pending' and delivery.lease_owner = ${owner}
        and delivery.lease_expires_at = held.lease_expires_at
      returning delivery.endpoint_id
    )
    update webhook_endpoints endpoint
    set failure_count = 0, last_success_at = now()
    where endpoint.id in (select endpoint_id from done)`);
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
  owner: string,
  delivery: ClaimedDelivery,
  lastError: DeliveryError,
  { retryScheduleMs, now = new Date() }: FailureOptions,
): Promise<void> {
  const delayMs = nextAttemptDelayMs(delivery.attempts + 1, retryScheduleMs === null ? {} : { baseScheduleMs: retryScheduleMs });
  const giveUp = shouldGiveUp(delivery.createdAt, new Date(now.getTime() + delayMs));
  await db.transaction(async (tx) => {
    const [held] = await tx.execute<{ endpoint_id: string }>(sql`
      update webhook_deliveries
      set attempts = attempts + 1, last_error = ${lastError}, lease_owner = null, lease_expires_at = null,
          status = ${giveUp ? 'failed' : 'pending'}, next_attempt_at = ${dbNowPlus(delayMs)},
          completed_at = case when ${giveUp} then now() end
      where ${heldBy(delivery, owner)}
      returning endpoint_id`);
    if (held === undefined) return;
    const [endpoint] = await tx
      .update(webhookEndpoints)
      .set({ failureCount: sql`${webhookEndpoints.failureCount} + 1`, lastError })
      .where(eq(webhookEndpoints.id, held.endpoint_id))
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
export async function recordSkipped(db: Db, owner: string, delivery: ClaimedDelivery): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: 'failed', completedAt: new Date(), leaseOwner: null, leaseExpiresAt: null })
    .where(heldBy(delivery, owner));
}
