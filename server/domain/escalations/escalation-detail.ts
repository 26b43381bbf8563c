import { and, asc, desc, eq, ne } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { devices, escalations, organizations, tasks, taskSteps } from '../../../db/schema';
import { DeviceStatusSchema } from '../devices/device-resource';
import { toPublicId } from '../ids';
import { TaskSchema, toTaskResource } from '../tasks/task-resource';
import { iso } from '../time';
import { EscalationSchema, toEscalationResource, type EscalationRow } from './escalation-resource';

/** How many of the task's steps a person answering is shown: the latest ones. */
export const DETAIL_STEP_LIMIT = 200;

/** A step of the task's timeline as a person answering sees it. */
export const DetailStepSchema = z.object({
  seq: z.number().int(),
  type: z.string(),
  action: z.string().nullable(),
  url: z.string().nullable(),
  title: z.string().nullable(),
  note: z.string().nullable(),
  created_at: z.string(),
});

/**
 * What a person needs to answer an escalation: the question, the task (its prompt and
 * status, so a page shows it running again once answered), the task's steps, its device,
 * and the escalation the task opened after this one, if it parked again.
 */
export const EscalationDetailSchema = z.object({
  escalation: EscalationSchema,
  organization: z.object({ id: z.string(), name: z.string() }),
  task: TaskSchema,
  steps: z.array(DetailStepSchema),
  device: z.object({ id: z.string(), name: z.string(), status: DeviceStatusSchema }),
  /** A pending escalation of the same task other than this one (the task asked again). */
  next_escalation_id: z.string().nullable(),
});
export type EscalationDetail = z.infer<typeof EscalationDetailSchema>;

export async function escalationDetail(db: DbOrTx, row: EscalationRow): Promise<EscalationDetail> {
  const [[task], [device], [organization], stepRows, [next]] = await Promise.all([
    db.select().from(tasks).where(eq(tasks.id, row.taskId)),
    db.select({ id: devices.id, name: devices.name, status: devices.status }).from(devices).where(eq(devices.id, row.deviceId)),
    db.select({ id: organizations.id, name: organizations.name }).from(organizations).where(eq(organizations.id, row.orgId)),
    db.select().from(taskSteps).where(eq(taskSteps.taskId, row.taskId)).orderBy(desc(taskSteps.seq)).limit(DETAIL_STEP_LIMIT),
    db
      .select({ id: escalations.id })
      .from(escalations)
      .where(and(eq(escalations.taskId, row.taskId), eq(escalations.status, 'pending'), ne(escalations.id, row.id)))
      .orderBy(asc(escalations.createdAt))
      .limit(1),
  ]);
  return {
    escalation: toEscalationResource(row),
    organization: { id: organization!.id, name: organization!.name },
    task: toTaskResource(task!),
    steps: stepRows.reverse().map((step) => ({
      seq: step.seq,
      type: step.type,
      action: step.action,
      url: step.url,
      title: step.title,
      note: step.note,
      created_at: iso(step.createdAt),
    })),
    device: { id: toPublicId('device', row.deviceId), name: device?.name ?? '', status: device?.status ?? 'terminated' },
    next_escalation_id: next === undefined ? null : toPublicId('escalation', next.id),
  };
}
