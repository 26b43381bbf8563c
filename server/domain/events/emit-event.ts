import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { events } from '../../../db/schema';
import { toPublicId } from '../ids';
import type { DeliverableEventType } from './catalogue';

/** NOTIFY channel that wakes the delivery worker; the payload is unused. */
export const OUTBOX_CHANNEL = 'operator_outbox';

export interface DomainEvent {
  orgId: string;
  /** Space of the resource; organization-wide endpoints see every Space. */
  spaceId: string | null;
  type: DeliverableEventType;
  /** The resource exactly as the API returns it. */
  resource: Record<string, unknown>;
}

/**
 * Writes a domain event to the outbox inside the caller's transaction, and fans it out
 * to one pending delivery per enabled endpoint that subscribes to the type and covers
 * the Space. Committing the change commits its event and deliveries, or none of them.
 */
export async function emitEvent(tx: Tx, event: DomainEvent): Promise<void> {
  const id = randomUUID();
  const createdAt = new Date().toISOString();
  const envelope = {
    id: toPublicId('event', id),
    object: 'event',
    type: event.type,
    created_at: createdAt,
    api_version: '0.1.0',
    org_id: event.orgId,
    space_id: event.spaceId,
    data: { object: event.resource },
  };
  // The event, its deliveries and the worker's wake-up in one statement: each statement of
  // a transaction is a round trip, and on a host busy with Chromium each waits for a core.
  // The pg_notify is delivered by PostgreSQL at commit, so the worker never wakes for an
  // uncommitted event, and only when there is something to deliver.
  await tx.execute(sql`
    with event as (
      insert into ${events} (id, org_id, space_id, type, envelope, created_at)
      values (${id}, ${event.orgId}, ${event.spaceId}, ${event.type}, ${JSON.stringify(envelope)}::jsonb, ${createdAt}::timestamptz)
    ), fanned_out as (
      insert into webhook_deliveries (event_id, endpoint_id, org_id, next_attempt_at)
      select ${id}, endpoint.id, endpoint.org_id, ${createdAt}::timestamptz
      from webhook_endpoints endpoint
      where endpoint.org_id = ${event.orgId}
        and endpoint.enabled
        and (cardinality(endpoint.event_types) = 0 or ${event.type} = any(endpoint.event_types))
        and (endpoint.space_id is null or endpoint.space_id = ${event.spaceId})
      returning 1
    )
    select pg_notify(${OUTBOX_CHANNEL}, '') where exists (select 1 from fanned_out)`);
}
