import { randomUUID } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Db, Tx } from '../../../db/client';
import { devices, tasks } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import type { DeviceRow } from '../devices/device-resource';
import { emitEvent } from '../events/emit-event';
import { toPublicId } from '../ids';
import { withIdempotency } from '../idempotency/with-idempotency';
import { actorOf, type Principal } from '../keys/principal';
import { dbNow, dbNowPlus } from '../db-clock';
import { notifyTaskChange } from '../channels/task-channel';
import { isUniqueViolation } from '../unique-violation';
import { outcomeAtSubmit } from '../task-caches/task-cache-runs';
import { normalizedDomains, type SubmitTaskBody } from './task-input';
import { toTaskResource, type Task } from './task-resource';

export interface SubmitTaskDeps {
  db: Db;
  config: { agent: { taskTimeoutMs: number; leaseMs: number } };
}

export interface SubmitTaskCall {
  principal: Principal;
  requestId: string;
  /** The device of the path, loaded for the principal (its organization and Space checked). */
  device: DeviceRow;
  body: SubmitTaskBody;
  /** The Idempotency-Key header as received. */
  idempotencyKey: string | string[] | undefined;
}

/**
 * POST /v1/devices/{id}/tasks, in the spec's order: (write gate, in the procedure) load
 * the device within the organization and check its Space; the device must be active
 * (terminated 410, anything else 409 device_not_ready); claim the slot; persist the
 * running task; 202. The claim is one conditional UPDATE in the same transaction as the
 * INSERT, and the unique partial index backs it up, so of any number of concurrent
 * submits exactly one wins.
 */
export async function submitTask(deps: SubmitTaskDeps, call: SubmitTaskCall): Promise<Task> {
  const { principal } = call;
  return withIdempotency(
    deps.db,
    { orgId: principal.orgId, route: 'POST /v1/devices/{id}/tasks', key: Array.isArray(call.idempotencyKey) ? call.idempotencyKey[0] : call.idempotencyKey, request: { device: toPublicId('device', call.device.id), ...call.body } },
    async () => {
      const { device } = call;
      assertAcceptsTasks(device.status);
      try {
        return await deps.db.transaction((tx) => claimAndInsert(tx, deps, call, device.id));
      } catch (error) {
        // The partial index tasks_one_live_per_device refused a second live task for the device.
        if (isUniqueViolation(error)) throw new ApiError('device_busy');
        throw error;
      }
    },
  );
}

async function claimAndInsert(tx: Tx, deps: SubmitTaskDeps, call: SubmitTaskCall, deviceId: string): Promise<Task> {
  const taskId = randomUUID();
  const [claimed] = await tx
    .update(devices)
    .set({ currentTaskId: taskId, lastActiveAt: dbNow() })
    // An open CDP connection holds the slot as a task would (server/domain/cdp/).
    .where(and(eq(devices.id, deviceId), eq(devices.status, 'active'), isNull(devices.currentTaskId), isNull(devices.cdpSessionId)))
    .returning({ spaceId: devices.spaceId });
  if (claimed === undefined) {
    // Lost the claim: the device changed status since it was read, or the slot is held.
    const [current] = await tx.select({ status: devices.status }).from(devices).where(eq(devices.id, deviceId));
    if (current === undefined) throw new ApiError('device_not_found');
    assertAcceptsTasks(current.status);
    throw new ApiError('device_busy');
  }

  const [row] = await tx
    .insert(tasks)
    .values({
      id: taskId,
      orgId: call.principal.orgId,
      spaceId: claimed.spaceId,
      deviceId,
      status: 'running',
      prompt: call.body.prompt,
      allowedDomains: normalizedDomains(call.body.allowed_domains),
      maxSteps: call.body.max_steps ?? null,
      outputSchema: call.body.output_schema ?? null,
      confirmBefore: call.body.confirm_before === undefined || call.body.confirm_before === null || call.body.confirm_before.length === 0 ? null : call.body.confirm_before,
      escalationOnTimeout: call.body.escalation_on_timeout ?? 'fail',
      cacheKey: call.body.cache_key ?? null,
      cacheOutcome: call.body.cache_key === undefined ? null : await outcomeAtSubmit(tx, claimed.spaceId, call.body.cache_key, call.body.prompt),
      createdAt: dbNow(),
      updatedAt: dbNow(),
      deadlineAt: dbNowPlus(deps.config.agent.taskTimeoutMs),
      // A start deadline: the device's host must lease the task before it passes, or
      // the lease sweep fails it with device_lost (its host is gone).
      leaseExpiresAt: dbNowPlus(deps.config.agent.leaseMs),
    })
    .returning();
  const task = toTaskResource(row!);
  // Sent together: postgres.js pipelines them, one round trip instead of three before the
  // commit that the device's worker waits for (created_at is the transaction's start).
  await Promise.all([
    recordAudit(tx, actorOf(call.principal, call.requestId), {
      action: 'operator.task.created',
      resourceType: 'task',
      resourceId: task.id,
      spaceId: row!.spaceId,
      details: { device_id: task.device_id, max_steps: row!.maxSteps, allowed_domains: row!.allowedDomains, output_schema: row!.outputSchema !== null, confirm_before: row!.confirmBefore, cache_key: row!.cacheKey },
    }),
    emitEvent(tx, { orgId: row!.orgId, spaceId: row!.spaceId, type: 'operator.task.created.v1', resource: task }),
    notifyTaskChange(tx, taskId, 'state'),
  ]);
  return task;
}

function assertAcceptsTasks(status: string): void {
  if (status === 'terminated') throw new ApiError('device_terminated');
  if (status !== 'active') throw new ApiError('device_not_ready');
}

