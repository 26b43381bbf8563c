import { and, eq, notInArray, type SQL } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { tasks } from '../../../db/schema';
import { systemActor } from '../keys/principal';
import { endTask } from './task-transitions';

/**
 * Fails with device_lost, one transaction each, up to `limit` tasks matching `lost`, a
 * condition on the tasks table that is checked again under the row lock (a heartbeat or
 * a resume may have changed the task meanwhile). Tasks in `excluding` are never touched.
 * Any instance may run it; concurrent sweeps fail each task once. Returns the ids failed.
 */
export async function failLostTasks(db: Db, lost: SQL, options: { limit: number; excluding?: readonly string[] }): Promise<string[]> {
  const excluding = options.excluding ?? [];
  const candidates = await db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(lost, excluding.length === 0 ? undefined : notInArray(tasks.id, [...excluding])))
    .limit(options.limit);
  const failed: string[] = [];
  for (const { id } of candidates) {
    const ended = await db.transaction(async (tx) => {
      const [row] = await tx.select().from(tasks).where(and(eq(tasks.id, id), lost)).for('update');
      if (row === undefined) return false;
      await endTask(tx, row, { status: 'failed', error: 'device_lost' }, systemActor(row.orgId));
      return true;
    });
    if (ended) failed.push(id);
  }
  return failed;
}
