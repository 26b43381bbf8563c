import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { escalationKinds, escalations, escalationStatuses, escalationSubjectKinds, escalationTimeoutOutcomes, escalationUrgencies } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { assertSpaceAccess } from '../spaces/space-access';
import { iso, isoOrNull } from '../time';
import { answerSchemaOf } from '../../../shared/answer-schema';

/** What a GET shows in place of each credentials value: the value itself is never stored in clear. */
export const REDACTED = '********';

/** The Escalation resource exactly as the API returns it (spec table, CONTRACT.md values). */
export const EscalationSchema = z.object({
  id: z.string(),
  object: z.literal('escalation'),
  attempt: z.number().int(),
  created_at: z.string(),
  expires_at: z.string(),
  kind: z.enum(escalationKinds).describe(
    'What answer is needed: question (free text), choice (one of `options`, or several when `multiple`), confirm (true or false), credentials (an object filling `fields`, all secret), takeover (a human acts in the page, then resolves; optional note). captcha, login and blocked are older kinds answered like a question.',
  ),
  reason: z.string(),
  /** `choice`: the options to pick from; null for the other kinds. */
  options: z.array(z.string()).nullable(),
  /** `choice`: whether several options may be picked; null for the other kinds. */
  multiple: z.boolean().nullable(),
  /** `credentials`: the fields the human fills; every one is secret. Null for the other kinds. */
  fields: z.array(z.object({ name: z.string(), secret: z.literal(true) })).nullable(),
  /** The JSON Schema (draft 2020-12) a resolve's `answer` must match. */
  answer_schema: z.record(z.string(), z.unknown()),
  /** What happens at `expires_at` if no one answered: the task fails (`escalation_expired`) or continues without an answer. */
  on_timeout: z.enum(escalationTimeoutOutcomes),
  status: z.enum(escalationStatuses),
  subject_kind: z.enum(escalationSubjectKinds),
  urgency: z.enum(escalationUrgencies),
  /** The answer as given; for `credentials`, each field shows `********` (the values are never stored in clear). */
  answer: z.json().nullable(),
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
    options: row.options,
    multiple: row.multiple,
    fields: row.fields === null ? null : row.fields.map((name) => ({ name, secret: true as const })),
    answer_schema: answerSchemaOf(row),
    on_timeout: row.onTimeout,
    status: row.status,
    subject_kind: row.subjectKind,
    urgency: row.urgency,
    answer: shownAnswer(row),
    cleared: row.cleared,
    device_id: toPublicId('device', row.deviceId),
    task_id: toPublicId('task', row.taskId),
    resolved_at: isoOrNull(row.resolvedAt),
    resolved_by: row.resolvedBy,
  };
}

function shownAnswer(row: EscalationRow): Escalation['answer'] {
  if (row.kind === 'credentials') {
    // Answered (a cleared credentials resolve always fills every field): the names, masked.
    return row.status === 'resolved' && row.cleared === true ? Object.fromEntries((row.fields ?? []).map((name) => [name, REDACTED])) : null;
  }
  return (row.answer ?? null) as Escalation['answer'];
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
