import { and, eq, isNotNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { devices, escalations, organizations, sessions, tasks } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { DeviceSchema, toDeviceResource } from '../devices/device-resource';
import { escalationDetail, type EscalationDetail } from '../escalations/escalation-detail';
import { parsePublicId, toPublicId } from '../ids';
import type { LiveViewCaller } from '../sessions/live-view-sessions';
import { TaskSchema, toTaskResource } from '../tasks/task-resource';
import type { StepScreenshotUrls } from '../tasks/task-steps';
import type { Operator } from './operator-accounts';
import { isOperatorMinter } from '../sessions/session-control';
import { operatorPrincipal } from './operator-principal';

// What an operator sees of any organization's device and escalation in the console, and
// the operator as the caller of a device's live view (sessions/live-view-sessions.ts: the
// /v1 session operations, audited with `via: "console"` and the operator's name).

/** A console watch session lasts this long; the live view mints a new one when it ends. */
export const CONSOLE_SESSION_TTL_SECS = 900;

export const OperatorDeviceViewSchema = z.object({
  device: DeviceSchema,
  organization: z.object({ id: z.string(), name: z.string() }),
  task: TaskSchema.nullable(),
  pending_escalation_id: z.string().nullable(),
  /** Whether a session (any) holds the takeover of the device now. */
  held: z.boolean(),
});
export type OperatorDeviceView = z.infer<typeof OperatorDeviceViewSchema>;

/** An escalation of any organization with what answering it needs; 404 escalation_not_found. */
export async function escalationForOperator(db: Db, screenshotUrls: StepScreenshotUrls, publicId: string): Promise<EscalationDetail> {
  const id = parsePublicId('escalation', publicId);
  const [row] = id === null ? [] : await db.select().from(escalations).where(eq(escalations.id, id));
  if (row === undefined) throw new ApiError('escalation_not_found');
  return escalationDetail(db, row, screenshotUrls);
}

/** A device of any organization: status, current task, the escalation it waits on; 404 device_not_found. */
export async function deviceForOperator(db: Db, publicId: string): Promise<OperatorDeviceView> {
  const id = parsePublicId('device', publicId);
  const [device] = id === null ? [] : await db.select().from(devices).where(eq(devices.id, id));
  if (device === undefined) throw new ApiError('device_not_found');
  const [[organization], [task], [pending], [hold]] = await Promise.all([
    db.select({ id: organizations.id, name: organizations.name }).from(organizations).where(eq(organizations.id, device.orgId)),
    device.currentTaskId === null ? Promise.resolve([]) : db.select().from(tasks).where(eq(tasks.id, device.currentTaskId)),
    device.currentTaskId === null
      ? Promise.resolve([])
      : db
          .select({ id: escalations.id })
          .from(escalations)
          .where(and(eq(escalations.taskId, device.currentTaskId), eq(escalations.status, 'pending'))),
    db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.deviceId, device.id), isNotNull(sessions.holdTaskId))),
  ]);
  return {
    device: toDeviceResource(device),
    organization: organization!,
    task: task === undefined ? null : toTaskResource(task),
    pending_escalation_id: pending === undefined ? null : toPublicId('escalation', pending.id),
    held: hold !== undefined,
  };
}

/** The operator as a live view's caller: any organization's device, the sessions operators minted. */
export function operatorLiveViewCaller(operator: Operator): LiveViewCaller {
  return {
    principalOn: (orgId) => operatorPrincipal(orgId, operator.name),
    deviceId: null,
    minted: isOperatorMinter,
    ttlSecs: () => CONSOLE_SESSION_TTL_SECS,
    takeOverReason: (given) => given,
    assertMayTakeOver: async () => undefined,
  };
}
