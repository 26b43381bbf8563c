import { and, eq, isNotNull } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { escalations, sessions } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { toPublicId } from '../ids';
import { notifySessionChange } from '../channels/session-channel';
import type { Actor } from '../keys/principal';

// What a task's end lets go of, in the transaction that ends it (endTask, with the task
// row locked): the state machine's owner releases what escalations and sessions attached
// to the task, so those areas call the task's transitions and never the reverse.

/**
 * Closes the pending escalations of a task that ended some other way (canceled, device
 * lost, timed out): `canceled`, audited, no event (the catalogue has none for it). A
 * resolve that arrives later answers `applied: false`.
 */
export async function cancelPendingEscalations(tx: Tx, taskId: string, actor: Actor): Promise<void> {
  const canceled = await tx
    .update(escalations)
    .set({ status: 'canceled', nextDeliveryAt: null, deliveryLeaseOwner: null })
    .where(and(eq(escalations.taskId, taskId), eq(escalations.status, 'pending')))
    .returning();
  for (const row of canceled) {
    await recordAudit(tx, actor, {
      action: 'operator.escalation.canceled',
      resourceType: 'escalation',
      resourceId: toPublicId('escalation', row.id),
      spaceId: row.spaceId,
      details: { task_id: toPublicId('task', row.taskId) },
    });
  }
}

/**
 * A task that ends while a session holds it (canceled, device lost) takes the hold with
 * it, so the session cannot keep relaying input to a device whose slot moved on.
 * Called by endTask inside its transaction, with the task row locked.
 */
export async function clearHoldsOnTask(tx: Tx, taskId: string): Promise<void> {
  const cleared = await tx
    .update(sessions)
    .set({ holdTaskId: null, holdExpiresAt: null })
    .where(eq(sessions.holdTaskId, taskId))
    .returning({ id: sessions.id });
  for (const { id } of cleared) await notifySessionChange(tx, id);
}

/**
 * Drops the credentials answers a task never typed (credential-seal.ts): a task's secrets
 * end with it. Called by endTask inside its transaction.
 */
export async function dropSealedCredentials(tx: Tx, taskId: string): Promise<void> {
  await tx
    .update(escalations)
    .set({ sealedAnswer: null })
    .where(and(eq(escalations.taskId, taskId), isNotNull(escalations.sealedAnswer)));
}
