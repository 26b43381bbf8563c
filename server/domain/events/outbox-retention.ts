import { and, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { events, webhookDeliveries } from '../../../db/schema';

/**
 * How long the outbox keeps what it no longer needs. Deliveries give up after 24 h, so a
 * week leaves room to investigate a failure before its rows go.
 */
export const OUTBOX_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Deletes finished deliveries older than the retention, then events older than it that no
 * pending delivery still needs. Without this both tables only ever grow.
 */
export async function pruneOutbox(db: Db, now = new Date()): Promise<{ deliveries: number; events: number }> {
  const cutoff = new Date(now.getTime() - OUTBOX_RETENTION_MS);
  const deliveries = await db
    .delete(webhookDeliveries)
    .where(and(inArray(webhookDeliveries.status, ['succeeded', 'failed']), lt(webhookDeliveries.createdAt, cutoff)))
    .returning({ id: webhookDeliveries.id });
  const prunedEvents = await db
    .delete(events)
    .where(and(lt(events.createdAt, cutoff), sql`not exists (select 1 from ${webhookDeliveries} where ${webhookDeliveries.eventId} = ${events.id} and ${webhookDeliveries.status} = 'pending')`))
    .returning({ id: events.id });
  return { deliveries: deliveries.length, events: prunedEvents.length };
}
