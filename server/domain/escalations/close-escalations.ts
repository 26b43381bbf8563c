import { and, eq } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { escalations } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { toPublicId } from '../ids';
import type { Actor } from '../keys/principal';

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
