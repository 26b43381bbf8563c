import { and, desc, eq } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../../db/client';
import { tasks } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { loadDeviceForCaller } from '../devices/load-device';
import { parsePublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { olderThan, type CursorCodec, type Page, type PageQuery } from '../pagination/cursor';
import { assertSpaceAccess } from '../spaces/space-access';
import { isTerminal, toTaskResource, type Task, type TaskRow } from './task-resource';

/**
 * The caller's task by public id: malformed, absent and other organizations' ids are the
 * same 404 task_not_found; a task in a Space the key does not hold is 403.
 */
export async function loadTaskForCaller(db: DbOrTx, principal: Principal, publicId: string, options: { forUpdate?: boolean } = {}): Promise<TaskRow> {
  const id = parsePublicId('task', publicId);
  if (id === null) throw new ApiError('task_not_found');
  const query = db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, id), eq(tasks.orgId, principal.orgId)));
  const [row] = options.forUpdate === true ? await query.for('update') : await query;
  if (row === undefined) throw new ApiError('task_not_found');
  assertSpaceAccess(principal, row.spaceId);
  return row;
}

/** GET /v1/tasks/{id}. */
export async function getTask(db: Db, principal: Principal, publicId: string): Promise<Task> {
  return toTaskResource(await loadTaskForCaller(db, principal, publicId));
}

/**
 * GET /v1/devices/{id}/tasks: the device is resolved and its Space checked first, so a
 * foreign device id is 404 before any task is read; then newest first, keyset paged.
 */
export async function listDeviceTasks(db: Db, cursors: CursorCodec, principal: Principal, deviceId: string, query: PageQuery): Promise<Page<Task>> {
  const device = await loadDeviceForCaller(db, principal, deviceId);
  const list = `device-tasks:${principal.orgId}:${device.id}`;
  const position = query.cursor === undefined ? null : cursors.decode(list, query.cursor);
  const rows = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.deviceId, device.id), eq(tasks.orgId, principal.orgId), olderThan(tasks.createdAt, tasks.id, position)))
    .orderBy(desc(tasks.createdAt), desc(tasks.id))
    .limit(query.limit + 1);
  return cursors.page(list, rows, query.limit, toTaskResource);
}

/** The task as the API returns it once it is terminal; null while it is live. */
export async function getTaskIfTerminal(db: DbOrTx, taskId: string): Promise<Task | null> {
  const [row] = await db.select().from(tasks).where(eq(tasks.id, taskId));
  return row === undefined || !isTerminal(row.status) ? null : toTaskResource(row);
}
