import { and, desc, eq, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { auditEvents } from '../../../db/schema';
import { toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { olderThan, type CursorCodec, type Page, type PageQuery } from '../pagination/cursor';
import { listSpace } from '../spaces/space-access';
import { iso } from '../time';

export const AuditEventSchema = z.object({
  object: z.literal('audit_event'),
  id: z.string(),
  action: z.string(),
  actor: z.string(),
  resource_type: z.string(),
  resource_id: z.string(),
  request_id: z.string().nullable(),
  created_at: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export type AuditEvent = z.infer<typeof AuditEventSchema>;

export interface AuditFilters extends PageQuery {
  action?: string;
  resource_id?: string;
  space_id?: string;
}

export async function listAuditEvents(db: Db, cursors: CursorCodec, principal: Principal, filters: AuditFilters): Promise<Page<AuditEvent>> {
  const spaceId = listSpace(principal, filters.space_id);
  const list = `audit:${principal.orgId}:${spaceId ?? '*'}:${filters.action ?? '*'}:${filters.resource_id ?? '*'}`;
  const position = filters.cursor === undefined ? null : cursors.decode(list, filters.cursor);
  const conditions: (SQL | undefined)[] = [
    eq(auditEvents.orgId, principal.orgId),
    spaceId === null ? undefined : eq(auditEvents.spaceId, spaceId),
    filters.action === undefined ? undefined : eq(auditEvents.action, filters.action),
    filters.resource_id === undefined ? undefined : eq(auditEvents.resourceId, filters.resource_id),
    olderThan(auditEvents.createdAt, auditEvents.id, position),
  ];
  const rows = await db
    .select()
    .from(auditEvents)
    .where(and(...conditions))
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(filters.limit + 1);
  return cursors.page(list, rows, filters.limit, (row) => ({
    object: 'audit_event' as const,
    id: toPublicId('audit', row.id),
    action: row.action,
    actor: row.actor,
    resource_type: row.resourceType,
    resource_id: row.resourceId,
    request_id: row.requestId,
    created_at: iso(row.createdAt),
    details: row.details as Record<string, unknown>,
  }));
}
