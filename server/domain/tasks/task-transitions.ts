import { and, eq } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { devices, tasks, type TaskStatus } from '../../../db/schema';
import { failureResult, type FailureCode } from '../../agent/failures';
import type { JsonValue } from '../../agent/json-value';
import { recordAudit } from '../audit/record-audit';
import { emitEvent } from '../events/emit-event';
import type { Actor } from '../keys/principal';
import { dbNow, dbNowPlus } from '../db-clock';
import { notifyTaskChange } from '../channels/task-channel';
import { cancelPendingEscalations, clearHoldsOnTask, dropSealedCredentials } from './task-end-releases';
import { toTaskResource, type TaskRow } from './task-resource';

/** How a task ends: every terminal path goes through endTask. */
export type TaskEnd =
  | { status: 'succeeded'; result: JsonValue }
  | { status: 'failed'; error: FailureCode }
  | { status: 'canceled' };

const EVENT_BY_STATUS = {
  running: 'operator.task.resumed.v1',
  needs_human: 'operator.task.needs_human.v1',
  succeeded: 'operator.task.succeeded.v1',
  failed: 'operator.task.failed.v1',
  canceled: 'operator.task.canceled.v1',
} as const satisfies Record<TaskStatus, string>;

/** Locks and re-reads a task row inside a transaction (null when it does not exist). */
export async function lockTask(tx: Tx, taskId: string): Promise<TaskRow | null> {
  const [row] = await tx.select().from(tasks).where(eq(tasks.id, taskId)).for('update');
  return row ?? null;
}

/**
 * Ends a live task the caller holds locked, in the caller's transaction: status, result
 * (the answer, `{error, detail}` with the fixed sentence, or null when canceled),
 * finished_at, lease dropped, the device's slot released (only if it still points at
 * this task: a device lost or deleted meanwhile has cleared it already), audit entry,
 * outbox event and the stream notification. The slot is released, a request for help
 * still pending is canceled and a takeover hold on the task is dropped on every terminal
 * path, because every terminal path is this function.
 */
export async function endTask(tx: Tx, row: TaskRow, end: TaskEnd, actor: Actor): Promise<TaskRow> {
  const result = end.status === 'succeeded' ? end.result : end.status === 'failed' ? failureResult(end.error) : null;
  const [updated] = await tx
    .update(tasks)
    .set({ status: end.status, result, finishedAt: dbNow(), updatedAt: dbNow(), leaseOwner: null, leaseExpiresAt: null })
    .where(eq(tasks.id, row.id))
    .returning();
  // The releases need no answer of one another and go together (postgres.js pipelines
  // them; the two of the escalations run in the order sent); the task's own audit entry
  // and event follow those of the escalations it cancels.
  await Promise.all([
    tx
      .update(devices)
      .set({ currentTaskId: null, lastActiveAt: dbNow() })
      .where(and(eq(devices.id, row.deviceId), eq(devices.currentTaskId, row.id)))
      .execute(),
    cancelPendingEscalations(tx, row.id, actor),
    clearHoldsOnTask(tx, row.id),
    dropSealedCredentials(tx, row.id),
  ]);
  await recordChange(tx, actor, row, updated!, end.status === 'failed' ? { error: end.error } : {});
  return updated!;
}

/**
 * Parks a running task at `needs_human`: the worker lets go of its lease but the device's
 * slot stays held, so nothing else runs on the page the human is asked about. The task
 * continues only through resumeParkedTask.
 */
export async function parkTask(tx: Tx, row: TaskRow, actor: Actor, details: Record<string, unknown>): Promise<TaskRow> {
  const [updated] = await tx
    .update(tasks)
    .set({ status: 'needs_human', updatedAt: dbNow(), leaseOwner: null, leaseExpiresAt: null })
    .where(eq(tasks.id, row.id))
    .returning();
  await recordChange(tx, actor, row, updated!, details);
  return updated!;
}

/**
 * Un-parks a `needs_human` task the caller holds locked: back to `running` with no lease
 * owner, so the worker on the device's host claims it and runs the agent again with the
 * task's recorded steps as history (the offline planner continues after the instruction
 * that parked it; the model planner sees the whole history). `leaseMs` is the start
 * deadline, as on submit: past it without a claim, the lease sweep fails the task with
 * device_lost. The deadline for the whole task restarts too, since the time a human
 * took is not the agent's. Returns null (and changes nothing) when the task is not
 * parked, so a second resume is harmless.
 *
 * This is the entry point for takeover release and escalation answers: call it inside
 * the transaction that records the human's side of the change.
 */
export async function resumeParkedTask(tx: Tx, taskId: string, actor: Actor, settings: { leaseMs: number; taskTimeoutMs: number }): Promise<TaskRow | null> {
  const row = await lockTask(tx, taskId);
  if (row === null || row.status !== 'needs_human') return null;
  // Whoever resumes it (an answer, a released takeover) settles what it was parked on: a
  // request for help still pending could otherwise resume a later park with a stale answer.
  await cancelPendingEscalations(tx, row.id, actor);
  // An answer that resumes a task someone has taken over ends the takeover: the agent
  // drives the page again, so no session may keep sending input to it.
  await clearHoldsOnTask(tx, row.id);
  const [updated] = await tx
    .update(tasks)
    .set({
      status: 'running',
      updatedAt: dbNow(),
      leaseOwner: null,
      leaseExpiresAt: dbNowPlus(settings.leaseMs),
      deadlineAt: dbNowPlus(settings.taskTimeoutMs),
    })
    .where(eq(tasks.id, row.id))
    .returning();
  await recordChange(tx, actor, row, updated!, {});
  return updated!;
}

async function recordChange(tx: Tx, actor: Actor, before: TaskRow, after: TaskRow, details: Record<string, unknown>): Promise<void> {
  const resource = toTaskResource(after);
  const move = after.status === 'running' ? 'resumed' : after.status;
  // Sent together: postgres.js pipelines them, one round trip instead of three.
  await Promise.all([
    recordAudit(tx, actor, {
      action: `operator.task.${move}`,
      resourceType: 'task',
      resourceId: resource.id,
      spaceId: after.spaceId,
      details: { from: before.status, to: after.status, ...details },
    }),
    emitEvent(tx, { orgId: after.orgId, spaceId: after.spaceId, type: EVENT_BY_STATUS[after.status], resource }),
    notifyTaskChange(tx, after.id, 'state'),
  ]);
}
