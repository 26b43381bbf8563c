import { count, eq } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { escalations, organizations, type EscalationKind } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { emitEvent } from '../events/emit-event';
import type { Actor } from '../keys/principal';
import { dbNow, dbNowPlus } from '../db-clock';
import type { TaskRow } from '../tasks/task-resource';
import { toEscalationResource, type EscalationRow } from './escalation-resource';

export interface EscalationRequest {
  kind: EscalationKind;
  /** What the agent needs: its question, or what blocked it. */
  reason: string;
}

/**
 * Opens an escalation for a task that has just parked at `needs_human`, in the
 * transaction that parked it: recorded, audited, `operator.escalation.created.v1` in the
 * outbox, and, when the organization has an escalation URL, due for delivery at once
 * (the escalation worker POSTs it with a fresh resolve bearer). It expires after `ttlMs`.
 */
export async function openEscalation(tx: Tx, task: TaskRow, request: EscalationRequest, actor: Actor, settings: { ttlMs: number }): Promise<EscalationRow> {
  const [organization] = await tx.select({ escalationUrl: organizations.escalationUrl }).from(organizations).where(eq(organizations.id, task.orgId));
  const [earlier] = await tx.select({ count: count() }).from(escalations).where(eq(escalations.taskId, task.id));
  const deliver = organization?.escalationUrl != null;
  const [row] = await tx
    .insert(escalations)
    .values({
      orgId: task.orgId,
      spaceId: task.spaceId,
      taskId: task.id,
      deviceId: task.deviceId,
      attempt: (earlier?.count ?? 0) + 1,
      kind: request.kind,
      subjectKind: 'task',
      urgency: 'normal',
      reason: request.reason,
      status: 'pending',
      createdAt: dbNow(),
      expiresAt: dbNowPlus(settings.ttlMs),
      tokenHashes: [],
      deliveryStatus: deliver ? 'pending' : 'none',
      nextDeliveryAt: deliver ? dbNow() : null,
    })
    .returning();
  const escalation = toEscalationResource(row!);
  await recordAudit(tx, actor, {
    action: 'operator.escalation.created',
    resourceType: 'escalation',
    resourceId: escalation.id,
    spaceId: row!.spaceId,
    details: { task_id: escalation.task_id, kind: escalation.kind, attempt: escalation.attempt, delivered_to_url: deliver },
  });
  await emitEvent(tx, { orgId: row!.orgId, spaceId: row!.spaceId, type: 'operator.escalation.created.v1', resource: escalation });
  return row!;
}
