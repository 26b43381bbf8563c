import { and, asc, eq, lte, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { escalations } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { emitEvent } from '../events/emit-event';
import { systemActor } from '../keys/principal';
import { appendHumanStep } from '../tasks/task-steps';
import { endTask, lockTask, resumeParkedTask } from '../tasks/task-transitions';
import { toEscalationResource } from './escalation-resource';

/** What the agent is told when its request for help expired with `on_timeout: continue`. */
export const NO_ANSWER_NOTE = 'No human answered the request for help before it expired. Continue the task without an answer.';

/** Escalations looked at per sweep; the rest wait for the next one. */
const BATCH = 50;

/**
 * Expires pending escalations past `expires_at` (by the database clock): each becomes
 * `expired` (audited, `operator.escalation.expired.v1`) and its task, if still parked,
 * fails with `escalation_expired`, freeing the device's slot (`on_timeout: fail`), or
 * resumes with a `human_no_answer` message step telling the agent it goes on without an
 * answer (`on_timeout: continue`), in one transaction per escalation. Returns how many expired.
 */
export async function expireOverdueEscalations(db: Db, settings: { leaseMs: number; taskTimeoutMs: number }): Promise<number> {
  const due = await db
    .select({ id: escalations.id, taskId: escalations.taskId })
    .from(escalations)
    .where(and(eq(escalations.status, 'pending'), lte(escalations.expiresAt, sql`now()`)))
    .orderBy(asc(escalations.expiresAt))
    .limit(BATCH);
  let expired = 0;
  for (const candidate of due) {
    // The task first, then the escalation: the order every path that touches both takes
    // (parking, resolve, cancel), so two of them never wait on each other.
    const changed = await db.transaction(async (tx) => {
      const task = await lockTask(tx, candidate.taskId);
      const [row] = await tx
        .update(escalations)
        .set({ status: 'expired', nextDeliveryAt: null, deliveryLeaseOwner: null })
        .where(and(eq(escalations.id, candidate.id), eq(escalations.status, 'pending'), lte(escalations.expiresAt, sql`now()`)))
        .returning();
      if (row === undefined) return false; // resolved or canceled meanwhile
      const actor = systemActor(row.orgId);
      const escalation = toEscalationResource(row);
      await recordAudit(tx, actor, {
        action: 'operator.escalation.expired',
        resourceType: 'escalation',
        resourceId: escalation.id,
        spaceId: row.spaceId,
        details: { task_id: escalation.task_id },
      });
      await emitEvent(tx, { orgId: row.orgId, spaceId: row.spaceId, type: 'operator.escalation.expired.v1', resource: escalation });
      if (task?.status !== 'needs_human') return true;
      if (row.onTimeout === 'fail') {
        await endTask(tx, task, { status: 'failed', error: 'escalation_expired' }, actor);
        return true;
      }
      await appendHumanStep(tx, task, 'human_no_answer', NO_ANSWER_NOTE);
      await resumeParkedTask(tx, task.id, actor, settings);
      return true;
    });
    if (changed) expired += 1;
  }
  return expired;
}
