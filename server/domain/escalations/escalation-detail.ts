import { and, asc, eq, ne } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { devices, escalations, organizations, tasks } from '../../../db/schema';
import { DeviceStatusSchema } from '../devices/device-resource';
import { toPublicId } from '../ids';
import { TaskSchema, toTaskResource } from '../tasks/task-resource';
import { latestSteps, TaskStepSchema, type StepScreenshotUrls } from '../tasks/task-steps';
import { EscalationSchema, toEscalationResource, type EscalationRow } from './escalation-resource';

/** How many of the task's steps a person answering is shown: the latest ones. */
export const DETAIL_STEP_LIMIT = 200;

/**
 * What a person needs to answer an escalation: the question, the task (its prompt and
 * status, so a page shows it running again once answered), the task's steps, its device,
 * and the escalation the task opened after this one, if it parked again.
 */
export const EscalationDetailSchema = z.object({
  escalation: EscalationSchema,
  organization: z.object({ id: z.string(), name: z.string() }),
  task: TaskSchema,
  /** The latest DETAIL_STEP_LIMIT steps, in order, as the task-steps module maps them (the reader's screenshot links). */
  steps: z.array(TaskStepSchema),
  device: z.object({ id: z.string(), name: z.string(), status: DeviceStatusSchema }),
  /** A pending escalation of the same task other than this one (the task asked again). */
  next_escalation_id: z.string().nullable(),
});
export type EscalationDetail = z.infer<typeof EscalationDetailSchema>;

/** The escalation's detail; its steps' `screenshot_url` are the reader's (StepScreenshotUrls). */
export async function escalationDetail(db: DbOrTx, row: EscalationRow, screenshotUrls: StepScreenshotUrls): Promise<EscalationDetail> {
  const [[task], [device], [organization], steps, [next]] = await Promise.all([
    db.select().from(tasks).where(eq(tasks.id, row.taskId)),
    db.select({ id: devices.id, name: devices.name, status: devices.status }).from(devices).where(eq(devices.id, row.deviceId)),
    db.select({ id: organizations.id, name: organizations.name }).from(organizations).where(eq(organizations.id, row.orgId)),
    latestSteps(db, screenshotUrls, row.taskId, DETAIL_STEP_LIMIT),
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
    steps,
    device: { id: toPublicId('device', row.deviceId), name: device?.name ?? '', status: device?.status ?? 'terminated' },
    next_escalation_id: next === undefined ? null : toPublicId('escalation', next.id),
  };
}
