import { and, eq, isNotNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { devices, escalations, organizations, sessions, tasks } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { DeviceSchema, toDeviceResource } from '../devices/device-resource';
import { escalationDetail, type EscalationDetail } from '../escalations/escalation-detail';
import { parsePublicId, toPublicId } from '../ids';
import { mintSession } from '../sessions/mint-session';
import { MintedSessionSchema, type MintedSession } from '../sessions/session-resource';
import { release, revokeSession, takeOver, type ReleaseResult, type SessionOperationDeps } from '../sessions/session-operations';
import { TaskSchema, toTaskResource } from '../tasks/task-resource';
import type { StepScreenshotUrls } from '../tasks/task-steps';
import type { Operator } from './operator-accounts';
import { isOperatorMinter } from '../sessions/session-control';
import { operatorPrincipal } from './operator-principal';

// What an operator does with a device from the console: watch it, take it over, release
// it. Every move is the /v1 operation itself (mintSession, takeOver, release) with the
// operator as the caller (operator-principal.ts), so the same rules hold (device active,
// one hold per device, a task to take over, the hold's 300 s) and the same audit events
// and webhooks are written, with `via: "console"` and the operator's name.

/** A console watch session lasts this long; the live view mints a new one when it ends. */
export const CONSOLE_SESSION_TTL_SECS = 900;

export const OperatorTakeoverSchema = z.object({ session: MintedSessionSchema, hold_expires_at: z.string(), task_id: z.string() });
export type OperatorTakeover = z.infer<typeof OperatorTakeoverSchema>;

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

/** The organization a device belongs to, for the operator's caller; 404 device_not_found. */
async function orgOfDevice(db: Db, publicId: string): Promise<string> {
  const id = parsePublicId('device', publicId);
  const [row] = id === null ? [] : await db.select({ orgId: devices.orgId }).from(devices).where(eq(devices.id, id));
  if (row === undefined) throw new ApiError('device_not_found');
  return row.orgId;
}

/** A watch session of the device for the operator's live view (POST /v1/devices/{id}/sessions's rules). */
export async function watchDeviceAsOperator(deps: SessionOperationDeps, operator: Operator, requestId: string, devicePublicId: string): Promise<MintedSession> {
  const principal = operatorPrincipal(await orgOfDevice(deps.db, devicePublicId), operator.name);
  return mintSession(deps.db, deps.config.http.publicUrl, { principal, requestId, devicePublicId, body: { mode: 'watch', ttl_secs: CONSOLE_SESSION_TTL_SECS } });
}

/**
 * Takes the device over for the operator: a control session, then its takeover (the
 * task parks, or stays parked). A refused takeover (another session holds the device, no
 * task to take over) revokes the session it minted, so nothing is left live.
 */
export async function takeOverAsOperator(
  deps: SessionOperationDeps,
  operator: Operator,
  requestId: string,
  devicePublicId: string,
  reason: string | undefined,
): Promise<OperatorTakeover> {
  const principal = operatorPrincipal(await orgOfDevice(deps.db, devicePublicId), operator.name);
  const session = await mintSession(deps.db, deps.config.http.publicUrl, { principal, requestId, devicePublicId, body: { mode: 'control', ttl_secs: CONSOLE_SESSION_TTL_SECS } });
  try {
    const held = await takeOver(deps, principal, requestId, session.id, { reason });
    return { session, hold_expires_at: held.hold_expires_at, task_id: held.task_id };
  } catch (error) {
    await revokeSession(deps, principal, requestId, session.id).catch(() => undefined);
    throw error;
  }
}

/** The organization of a session operators minted; 404 session_not_found for any other (an organization's own sessions are its business). */
async function orgOfOperatorSession(db: Db, sessionPublicId: string): Promise<string> {
  const id = parsePublicId('session', sessionPublicId);
  const [row] = id === null ? [] : await db.select({ orgId: sessions.orgId, keyId: sessions.keyId }).from(sessions).where(eq(sessions.id, id));
  if (row === undefined || !isOperatorMinter(row.keyId)) throw new ApiError('session_not_found');
  return row.orgId;
}

/** Releases a takeover the operator's console holds; the task resumes (POST /v1/sessions/{id}/release's rules). */
export async function releaseAsOperator(deps: SessionOperationDeps, operator: Operator, requestId: string, sessionPublicId: string): Promise<ReleaseResult> {
  return release(deps, operatorPrincipal(await orgOfOperatorSession(deps.db, sessionPublicId), operator.name), requestId, sessionPublicId);
}

/**
 * Ends a session the console minted when its page closes (DELETE /v1/sessions/{id}'s
 * rules: a hold it had is dropped and the task resumes), so a closed page stops being
 * metered; one already ended is 410 session_expired.
 */
export async function endSessionAsOperator(deps: SessionOperationDeps, operator: Operator, requestId: string, sessionPublicId: string): Promise<void> {
  await revokeSession(deps, operatorPrincipal(await orgOfOperatorSession(deps.db, sessionPublicId), operator.name), requestId, sessionPublicId);
}
