import type { DbOrTx } from '../../../db/client';
import { auditEvents } from '../../../db/schema';
import type { Actor } from '../keys/principal';

export interface AuditEntry {
  action: string;
  resourceType: string;
  /** Public (prefixed) id. */
  resourceId: string;
  /** Space of the resource; null or absent for organization-level resources. */
  spaceId?: string | null;
  /** Non-secret facts about the change only. */
  details?: Record<string, unknown>;
}

/** Writes an audit event; callers pass their transaction so the event commits with the change. */
export async function recordAudit(tx: DbOrTx, actor: Actor, entry: AuditEntry): Promise<void> {
  await tx.insert(auditEvents).values({
    orgId: actor.orgId,
    spaceId: entry.spaceId ?? null,
    actor: actor.actor,
    requestId: actor.requestId,
    action: entry.action,
    resourceType: entry.resourceType,
    resourceId: entry.resourceId,
    details: { ...entry.details, ...actor.origin, ...(actor.oauthGrantId === undefined ? {} : { oauth_grant_id: actor.oauthGrantId }) },
  });
}
