import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { escalations, organizations } from '../../../db/schema';
import { dbNow, dbNowPlus } from '../db-clock';
import { toPublicId } from '../ids';
import { Lease, type LeaseClaim } from '../lease';
import type { DeliveryError } from '../webhooks/deliver';
import { nextAttemptDelayMs, shouldGiveUp } from '../webhooks/retry-schedule';
import { toEscalationResource, type Escalation } from './escalation-resource';
import { mintEscalationToken } from './escalation-token';
import { answerUrl, mintAnswerLinkSecret } from './answer-link-secret';

// `next_delivery_at` is both when the next attempt falls due and, while an attempt holds the
// delivery, its lease's expiry: a claimed row is not due again until the lease runs out, so
// an instance that dies mid-attempt leaves it to whoever ticks next.
const deliveryLease = new Lease(escalations, {
  id: escalations.id,
  owner: escalations.deliveryLeaseOwner,
  expiresAt: escalations.nextDeliveryAt,
});
const deliveryPending = eq(escalations.deliveryStatus, 'pending');
const due = and(deliveryPending, eq(escalations.status, 'pending'), lte(escalations.nextDeliveryAt, dbNow()));

/** One POST to an organization's escalation URL that this instance holds the lease for. */
export interface ClaimedEscalationDelivery extends LeaseClaim {
  url: string;
  /** The request body, bearer included: built once per attempt, never stored. */
  body: string;
  /** The organization's escalation signing secret, the HMAC key of the attempt's signature. */
  signingSecret: string;
  /** Attempts already made before this one. */
  attempts: number;
  createdAt: Date;
  expiresAt: Date;
}

/** What the escalation URL receives (CONTRACT.md). */
export interface EscalationDeliveryBody {
  escalation: Escalation;
  resolve_url: string;
  token: string;
  /** The one-time page where a person without a console key watches, takes over and answers (docs/api.md, "Answer links"). */
  answer_url: string;
}

/**
 * Claims up to `limit` due deliveries of pending escalations for `owner`. Each claim mints
 * a fresh resolve bearer and stores only its hash, in the claim's own transaction, so
 * the bearer works as soon as the POST carrying it leaves.
 */
export async function claimDueEscalationDeliveries(db: Db, owner: string, limit: number, leaseMs: number, publicUrl: string): Promise<ClaimedEscalationDelivery[]> {
  // The worker asks every second and almost always finds nothing: one indexed read then,
  // instead of a locking transaction.
  const [anyDue] = await db.select({ id: escalations.id }).from(escalations).where(due).limit(1);
  if (anyDue === undefined) return [];
  return db.transaction(async (tx) => {
    const leased = await deliveryLease
      .claim(tx, { owner, leaseMs, limit, due, orderBy: asc(escalations.nextDeliveryAt) })
      .returning({ row: escalations, ...deliveryLease.claimFields });
    if (leased.length === 0) return [];
    const destinations = await tx
      .select({ id: organizations.id, url: organizations.escalationUrl, signingSecret: organizations.escalationSigningSecret })
      .from(organizations)
      .where(inArray(organizations.id, [...new Set(leased.map(({ row }) => row.orgId))]));
    const claimed: ClaimedEscalationDelivery[] = [];
    for (const { row, ...claim } of leased) {
      const destination = destinations.find((organization) => organization.id === row.orgId);
      // A URL always comes with a secret (organizations_escalation_url_signed).
      if (destination === undefined || destination.url === null || destination.signingSecret === null) {
        // The organization's URL was removed after the escalation opened: nowhere to send it.
        await deliveryLease.release(tx, [claim], { set: { deliveryStatus: 'none' } });
        continue;
      }
      const { token, hash } = mintEscalationToken();
      const link = mintAnswerLinkSecret();
      await tx
        .update(escalations)
        .set({
          tokenHashes: sql`array_append(${escalations.tokenHashes}, ${hash})`,
          answerLinkHashes: sql`array_append(${escalations.answerLinkHashes}, ${link.hash})`,
        })
        .where(eq(escalations.id, row.id));
      const publicId = toPublicId('escalation', row.id);
      const body: EscalationDeliveryBody = {
        escalation: toEscalationResource(row),
        resolve_url: `${publicUrl}/v1/escalations/${publicId}/resolve`,
        token,
        answer_url: answerUrl(publicUrl, publicId, link.secret),
      };
      claimed.push({
        ...claim,
        url: destination.url,
        body: JSON.stringify(body),
        signingSecret: destination.signingSecret,
        attempts: row.deliveryAttempts,
        createdAt: row.createdAt,
        expiresAt: row.expiresAt,
      });
    }
    return claimed;
  });
}

export async function recordEscalationDelivered(db: Db, delivery: ClaimedEscalationDelivery): Promise<void> {
  await deliveryLease.release(db, [delivery], {
    set: { deliveryStatus: 'succeeded', deliveryAttempts: sql`${escalations.deliveryAttempts} + 1`, deliveryLastError: null },
    where: deliveryPending,
  });
}

/**
 * A failed attempt: retried on the webhook schedule while the escalation can still be
 * answered, given up (`failed`) once the next attempt would fall after it expires or
 * past the webhooks' 24 h.
 */
export async function recordEscalationDeliveryFailed(
  db: Db,
  delivery: ClaimedEscalationDelivery,
  lastError: DeliveryError,
  { retryScheduleMs, now = new Date() }: { retryScheduleMs: readonly number[] | null; now?: Date },
): Promise<void> {
  const delayMs = nextAttemptDelayMs(delivery.attempts + 1, retryScheduleMs === null ? {} : { baseScheduleMs: retryScheduleMs });
  const nextAt = new Date(now.getTime() + delayMs);
  const giveUp = nextAt >= delivery.expiresAt || shouldGiveUp(delivery.createdAt, nextAt);
  await deliveryLease.release(db, [delivery], {
    set: {
      deliveryStatus: giveUp ? 'failed' : 'pending',
      deliveryAttempts: sql`${escalations.deliveryAttempts} + 1`,
      deliveryLastError: lastError,
      nextDeliveryAt: giveUp ? null : dbNowPlus(delayMs),
    },
    where: deliveryPending,
  });
}
