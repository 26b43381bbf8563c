import type { Db } from '../../../db/client';
import { ApiError } from '../../core/errors';
import { actorOf, type Principal } from '../keys/principal';
import { loadTaskForCaller } from './load-task';
import { isTerminal, toTaskResource, type Task } from './task-resource';
import { endTask } from './task-transitions';

/**
 * POST /v1/tasks/{id}/cancel: a running or parked task becomes `canceled` at once and
 * its slot is free when this returns. The worker driving it (on any instance) hears the
 * change on the task channel and abandons the run within a tick; its own end is fenced
 * on `status = 'running'` and so writes nothing. A finished task is 409
 * task_not_cancelable.
 */
export async function cancelTask(db: Db, principal: Principal, requestId: string, publicId: string): Promise<Task> {
  return db.transaction(async (tx) => {
    const row = await loadTaskForCaller(tx, principal, publicId, { forUpdate: true });
    if (isTerminal(row.status)) throw new ApiError('task_not_cancelable');
    return toTaskResource(await endTask(tx, row, { status: 'canceled' }, actorOf(principal, requestId)));
  });
}
