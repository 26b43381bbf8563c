import { and, eq, lte, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { escalations } from '../../../db/schema';
import { dbNowPlus } from '../db-clock';
import { toPublicId } from '../ids';
import type { DeliveryError } from '../webhooks/deliver';
import { nextAttemptDelayMs, shouldGiveUp } from '../webhooks/retry-schedule';
import { toEscalationResource, type Escalation } from './escalation-resource';
import { mintEscalationToken } from './escalation-token';

/** One POST to an organization's escalation URL that this instance holds the lease for. */
export interface ClaimedEscalationDelivery {
  id: string;
  url: string;
  /** The request body, bearer included: built once per attempt, never stored. */
  body: string;
  /** The organization's escalation signing secret, the HMAC key of the attempt's signature. */
  signingSecret: string;
  /** Attempts already made before this one. */
  attempts: number;
  createdAt: Date;
  expiresAt: Date;
  /** `next_delivery_at` as the claim set it, as text: it identifies this claim. */
  leaseToken: string;
}

/** What the escalation URL receives (CONTRACT.md). */
export interface EscalationDeliveryBody {
  escalation: Escalation;
  resolve_url: string;
  token: string;
}

/**
 * Claims up to `limit` due deliveries of pending escalations for `owner`. Each claim mints
 * a fresh resolve bearer and stores only its hash, in the claim's own transaction, so
 * the bearer works as soon as the POST carrying it leaves. The lease moves
 * `next_delivery_at` to its expiry: an instance that dies mid-attempt leaves the row
 * due again once the lease runs out, and another instance picks it up.
 */
export async function claimDueEscalationDeliveries(db: Db, owner: string, limit: number, leaseMs: number, publicUrl: string): Promise<ClaimedEscalationDelivery[]> {
  // The worker asks every second and almost always finds nothing: one indexed read then,
  // instead of a locking transaction.
  const [anyDue] = await db
    .select({ id: escalations.id })
    .from(escalations)
    .where(and(eq(escalations.deliveryStatus, 'pending'), eq(escalations.status, 'pending'), lte(escalations.nextDeliveryAt, sql`now()`)))
    .limit(1);
  if (anyDue === undefined) return [];
  return db.transaction(async (tx) => {
    const due = await tx.execute<{ id: string; url: string | null; signing_secret: string | null }>(sql`
      select escalation.id, organization.escalation_url as url, organization.escalation_signing_secret as signing_secret
      from escalations escalation join organizations organization on organization.id = escalation.org_id
      where escalation.delivery_status = 'pending' and escalation.status = 'pending' and escalation.next_delivery_at <= now()
      order by escalation.next_delivery_at
      limit ${limit}
      for update of escalation skip locked`);
    const claimed: ClaimedEscalationDelivery[] = [];
    for (const { id, url, signing_secret: signingSecret } of due) {
      // A URL always comes with a secret (organizations_escalation_url_signed).
      if (url === null || signingSecret === null) {
        // The organization's URL was removed after the escalation opened: nowhere to send it.
        await tx.update(escalations).set({ deliveryStatus: 'none', nextDeliveryAt: null }).where(eq(escalations.id, id));
        continue;
      }
      const { token, hash } = mintEscalationToken();
      const [claim] = await tx
        .update(escalations)
        .set({
          tokenHashes: sql`array_append(${escalations.tokenHashes}, ${hash})`,
          deliveryLeaseOwner: owner,
          nextDeliveryAt: dbNowPlus(leaseMs),
        })
        .where(eq(escalations.id, id))
        .returning({ row: escalations, leaseToken: sql<string>`${escalations.nextDeliveryAt}::text` });
      const { row, leaseToken } = claim!;
      const body: EscalationDeliveryBody = {
        escalation: toEscalationResource(row),
        resolve_url: `${publicUrl}/v1/escalations/${toPublicId('escalation', row.id)}/resolve`,
        token,
      };
      claimed.push({
        id,
        url,
        body: JSON.stringify(body),
        signingSecret,
        attempts: row.deliveryAttempts,
        createdAt: row.createdAt,
        expiresAt: row.expiresAt,
        leaseToken,
      });
    }
    return claimed;
  });
}

// Matching the lease as well as the owner pins the update to this claim: a late result
// of an attempt whose lease ran out (and was claimed again) changes nothing.
function heldBy(delivery: ClaimedEscalationDelivery, owner: string) {
  return and(
    eq(escalations.id, delivery.id),
    eq(escalations.deliveryStatus, 'pending'),
    eq(escalations.deliveryLeaseOwner, owner),
    sql`${escalations.nextDeliveryAt} = ${delivery.leaseToken}::timestamptz`,
  );
}

export async function recordEscalationDelivered(db: Db, owner: string, delivery: ClaimedEscalationDelivery): Promise<void> {
  await db
    .update(escalations)
    .set({
      deliveryStatus: 'succeeded',
      deliveryAttempts: sql`${escalations.deliveryAttempts} + 1`,
      deliveryLastError: null,
      deliveryLeaseOwner: null,
      nextDeliveryAt: null,
    })
    .where(heldBy(delivery, owner));
}

/**
 * A failed attempt: retried on the webhook schedule while the escalation can still be
 * answered, given up (`failed`) once the next attempt would fall after it expires or
 * past the webhooks' 24 h.
 */
export async function recordEscalationDeliveryFailed(
  db: Db,
  owner: string,
  delivery: ClaimedEscalationDelivery,
  lastError: DeliveryError,
  { retryScheduleMs, now = new Date() }: { retryScheduleMs: readonly number[] | null; now?: Date },
): Promise<void> {
  const delayMs = nextAttemptDelayMs(delivery.attempts + 1, retryScheduleMs === null ? {} : { baseScheduleMs: retryScheduleMs });
  const nextAt = new Date(now.getTime() + delayMs);
  const giveUp = nextAt >= delivery.expiresAt || shouldGiveUp(delivery.createdAt, nextAt);
  await db
    .update(escalations)
    .set({
      deliveryStatus: giveUp ? 'failed' : 'pending',
      deliveryAttempts: sql`${escalations.deliveryAttempts} + 1`,
      deliveryLastError: lastError,
      deliveryLeaseOwner: null,
      nextDeliveryAt: giveUp ? null : dbNowPlus(delayMs),
    })
    .where(heldBy(delivery, owner));
}
