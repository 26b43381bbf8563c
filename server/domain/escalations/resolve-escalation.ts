import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, Tx } from '../../../db/client';
import { escalations, escalationStatuses } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { emitEvent } from '../events/emit-event';
import { parsePublicId, toPublicId } from '../ids';
import type { Actor } from '../keys/principal';
import { dbNow } from '../db-clock';
import type { TaskRow } from '../tasks/task-resource';
import { appendHumanStep } from '../tasks/task-steps';
import { endTask, lockTask, resumeParkedTask } from '../tasks/task-transitions';
import { toEscalationResource, type EscalationRow } from './escalation-resource';
import { matchesEscalationToken } from './escalation-token';
import { checkAnswer } from '../../../shared/answer-schema';
import { sealCredentials, type Credentials } from './credential-seal';
import { humanAnswerNote } from './human-answer-note';

/** `resolved_by` when the destination names neither `resolved_by` nor `source`. */
export const DEFAULT_RESOLVED_BY = 'escalation_destination';

/**
 * An answer as the wire carries it; whether it fits the escalation is checked against its
 * `answer_schema` (answer-schema.ts) once the escalation is read.
 */
export const AnswerValueSchema = z
  .union([
    z.string().max(20_000),
    z.union([z.literal(true), z.literal(false)]),
    z.array(z.string().max(1_000)).max(100),
    z.record(z.string().max(100), z.string().max(1_000)),
  ])
  .describe("Must match the escalation's `answer_schema`: text, true or false, a list of options, or an object of credentials fields.");

export const ResolveEscalationBodySchema = z.strictObject({
  answer: AnswerValueSchema.optional(),
  // Not z.boolean(): the REST adapter coerces boolean schemas ("false" would read as true).
  cleared: z.union([z.literal(true), z.literal(false)]).optional(),
  resolved_by: z.string().max(200).optional(),
  source: z.string().max(200).optional(),
});
export type ResolveEscalationBody = z.infer<typeof ResolveEscalationBodySchema>;

export const ResolveEscalationResultSchema = z.object({
  applied: z.boolean(),
  id: z.string(),
  object: z.literal('escalation'),
  status: z.enum(escalationStatuses),
});
export type ResolveEscalationResult = z.infer<typeof ResolveEscalationResultSchema>;

export interface ResolveDeps {
  db: Db;
  config: { agent: { leaseMs: number; taskTimeoutMs: number } };
}

/**
 * The escalation a resolve bearer opens, or 401 invalid_escalation_token. A malformed or
 * unknown id is the same 401 as a wrong bearer: the callback never tells a caller
 * without the bearer whether an escalation exists.
 */
export async function authenticateEscalationBearer(db: Db, publicId: string, bearer: string | null): Promise<EscalationRow> {
  const id = parsePublicId('escalation', publicId);
  if (bearer === null || id === null) throw new ApiError('invalid_escalation_token');
  const [row] = await db.select().from(escalations).where(eq(escalations.id, id));
  if (row === undefined || !matchesEscalationToken(bearer, row.tokenHashes)) throw new ApiError('invalid_escalation_token');
  return row;
}

/**
 * POST /v1/escalations/{id}/resolve, after authenticateEscalationBearer, or an operator's
 * answer in the console (`origin.via`). A pending
 * escalation becomes `resolved` with the human's answer; its parked task then resumes
 * with the answer recorded as a step the planner sees (`cleared` true, the default), or
 * fails with `escalation_not_cleared` (`cleared` false) or `confirmation_declined` (a
 * confirm answered false), in the same transaction. The answer must match the
 * escalation's answer_schema (400 `invalid_request`, `param: "answer"`, nothing changed);
 * a credentials answer is sealed for the task's run, never stored in clear. An
 * escalation that is no longer pending (resolved, expired, canceled) is left as it is:
 * `applied: false` with its status.
 */
export async function resolveEscalation(
  deps: ResolveDeps,
  authenticated: EscalationRow,
  body: ResolveEscalationBody,
  origin: { requestId: string | null; via: 'resolve_callback' | 'console' | 'answer_url' },
): Promise<ResolveEscalationResult> {
  return deps.db.transaction(async (tx) => {
    // The task first, then the escalation: the lock order of every path touching both.
    const task = await lockTask(tx, authenticated.taskId);
    const [row] = await tx.select().from(escalations).where(eq(escalations.id, authenticated.id)).for('update');
    const outcome = (applied: boolean, current: EscalationRow) => ({
      applied,
      id: toPublicId('escalation', current.id),
      object: 'escalation' as const,
      status: current.status,
    });
    if (row!.status !== 'pending') return outcome(false, row!);

    const cleared = body.cleared ?? true;
    // An answer that does not fit changes nothing: the escalation stays open for a better one.
    // `cleared: false` needs no answer, but one given must still fit.
    if (cleared || body.answer !== undefined) {
      const check = checkAnswer(row!, body.answer);
      if (!check.ok) throw new ApiError('invalid_request', { param: 'answer', message: check.message });
    }
    // A credentials answer is never stored in clear: sealed for the task's run, and masked in the resource.
    const credentials = row!.kind === 'credentials' && body.answer !== undefined ? (body.answer as Credentials) : null;
    const [resolved] = await tx
      .update(escalations)
      .set({
        status: 'resolved',
        answer: credentials !== null ? null : (body.answer ?? null),
        // Only for a task that will run again to type it; otherwise the value is simply not kept.
        sealedAnswer: credentials === null || !cleared || task?.status !== 'needs_human' ? null : await sealCredentials(deps.db, row!.taskId, credentials),
        cleared,
        resolvedBy: body.resolved_by ?? body.source ?? DEFAULT_RESOLVED_BY,
        resolvedAt: dbNow(),
        nextDeliveryAt: null,
        deliveryLeaseOwner: null,
      })
      .where(eq(escalations.id, row!.id))
      .returning();
    // Not a key and not the service itself: the audit trail names the callback, and
    // `resolved_by` says who answered. The answer stays out of it (it may be a password).
    const actor: Actor = { orgId: resolved!.orgId, actor: 'system', requestId: origin.requestId };
    const escalation = toEscalationResource(resolved!);
    await recordAudit(tx, actor, {
      action: 'operator.escalation.resolved',
      resourceType: 'escalation',
      resourceId: escalation.id,
      spaceId: resolved!.spaceId,
      details: { task_id: escalation.task_id, cleared, resolved_by: escalation.resolved_by, via: origin.via },
    });
    await emitEvent(tx, { orgId: resolved!.orgId, spaceId: resolved!.spaceId, type: 'operator.escalation.resolved.v1', resource: escalation });
    if (task?.status === 'needs_human') await continueTask(tx, deps, task, resolved!, actor);
    return outcome(true, resolved!);
  });
}

/**
 * Resumes the parked task with the human's answer in its history, or fails it if the wall
 * stands (`cleared: false`) or the human declined a confirmation (`answer: false`).
 */
async function continueTask(tx: Tx, deps: ResolveDeps, task: TaskRow, escalation: EscalationRow, actor: Actor): Promise<void> {
  if (escalation.cleared === false) {
    await endTask(tx, task, { status: 'failed', error: 'escalation_not_cleared' }, actor);
    return;
  }
  if (escalation.kind === 'confirm' && escalation.answer === false) {
    await endTask(tx, task, { status: 'failed', error: 'confirmation_declined' }, actor);
    return;
  }
  await appendHumanStep(tx, task, 'human_answer', humanAnswerNote(escalation));
  await resumeParkedTask(tx, task.id, actor, deps.config.agent);
}
