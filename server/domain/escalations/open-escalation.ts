import { count, eq } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { escalations, organizations } from '../../../db/schema';
import type { HelpRequest } from '../../agent/agent-action';
import { recordAudit } from '../audit/record-audit';
import { emitEvent } from '../events/emit-event';
import type { Actor } from '../keys/principal';
import { dbNow, dbNowPlus } from '../db-clock';
import type { TaskRow } from '../tasks/task-resource';
import { toEscalationResource, type EscalationRow } from './escalation-resource';

/** What the agent asks: the kind (`help`), with the options or fields it offers. */
export type EscalationRequest = HelpRequest & {
  /** What the agent needs: its question, or what blocked it. */
  reason: string;
};

/**
 * Opens an escalation for a task that has just parked at `needs_human`, in the
 * transaction that parked it: recorded, audited, `operator.escalation.created.v1` in the
 * outbox, and, when the organization has an escalation URL, due for delivery at once
 * (the escalation worker POSTs it with a fresh resolve bearer). It expires after `ttlMs`,
 * then fails the task or lets it go on as the task's `escalation_on_timeout` says; a
 * `confirm` always fails: an unanswered confirmation is never a yes.
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
      kind: request.help,
      options: request.help === 'choice' ? request.options : null,
      multiple: request.help === 'choice' ? request.multiple : null,
      fields: request.help === 'credentials' ? request.fields : null,
      onTimeout: request.help === 'confirm' ? 'fail' : task.escalationOnTimeout,
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
    details: { task_id: escalation.task_id, kind: escalation.kind, attempt: escalation.attempt, on_timeout: escalation.on_timeout, delivered_to_url: deliver },
  });
  await emitEvent(tx, { orgId: row!.orgId, spaceId: row!.spaceId, type: 'operator.escalation.created.v1', resource: escalation });
  return row!;
}
