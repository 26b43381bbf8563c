import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { escalationKinds, escalations, escalationStatuses, escalationSubjectKinds, escalationUrgencies } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { assertSpaceAccess } from '../spaces/space-access';
import { iso, isoOrNull } from '../time';

/** The Escalation resource exactly as the API returns it (spec table, CONTRACT.md values). */
export const EscalationSchema = z.object({
  id: z.string(),
  object: z.literal('escalation'),
  attempt: z.number().int(),
  created_at: z.string(),
  expires_at: z.string(),
  kind: z.enum(escalationKinds),
  reason: z.string(),
  status: z.enum(escalationStatuses),
  subject_kind: z.enum(escalationSubjectKinds),
  urgency: z.enum(escalationUrgencies),
  answer: z.string().nullable(),
  cleared: z.boolean().nullable(),
  device_id: z.string(),
  task_id: z.string(),
  resolved_at: z.string().nullable(),
  resolved_by: z.string().nullable(),
});
export type Escalation = z.infer<typeof EscalationSchema>;

export type EscalationRow = typeof escalations.$inferSelect;

export function toEscalationResource(row: EscalationRow): Escalation {
  return {
    id: toPublicId('escalation', row.id),
    object: 'escalation',
    attempt: row.attempt,
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    kind: row.kind,
    reason: row.reason,
    status: row.status,
    subject_kind: row.subjectKind,
    urgency: row.urgency,
    answer: row.answer,
    cleared: row.cleared,
    device_id: toPublicId('device', row.deviceId),
    task_id: toPublicId('task', row.taskId),
    resolved_at: isoOrNull(row.resolvedAt),
    resolved_by: row.resolvedBy,
  };
}

/**
 * The caller's escalation by public id: malformed, absent and other organizations' ids
 * are the same 404; one in a Space the key does not hold is 403.
 */
export async function loadEscalationForCaller(db: DbOrTx, principal: Principal, publicId: string): Promise<EscalationRow> {
  const id = parsePublicId('escalation', publicId);
  if (id === null) throw new ApiError('escalation_not_found');
  const [row] = await db
    .select()
    .from(escalations)
    .where(and(eq(escalations.id, id), eq(escalations.orgId, principal.orgId)));
  if (row === undefined) throw new ApiError('escalation_not_found');
  assertSpaceAccess(principal, row.spaceId);
  return row;
}
