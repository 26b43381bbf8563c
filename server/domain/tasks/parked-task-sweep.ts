import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, tasks } from '../../../db/schema';
import { systemActor } from '../keys/principal';
import { endTask } from './task-transitions';

// A parked task whose device no longer holds it in its slot: the device was deleted or
// its browser was lost while the task waited for a human.
const slotLost = and(
  eq(tasks.status, 'needs_human'),
  sql`not exists (select 1 from ${devices} where ${devices.id} = ${tasks.deviceId} and ${devices.currentTaskId} = ${tasks.id})`,
);

/**
 * Fails, with device_lost, every parked task whose device let go of it: nothing else
 * would end it before its escalation expires, and an answer could not resume it on a
 * browser that is gone. Its pending escalation is canceled with it (endTask). The task
 * row is locked before the device row, the order every task path takes.
 */
export async function failParkedTasksWithoutDevice(db: Db, limit = 100): Promise<string[]> {
  const orphaned = await db.select({ id: tasks.id }).from(tasks).where(slotLost).limit(limit);
  const failed: string[] = [];
  for (const { id } of orphaned) {
    const ended = await db.transaction(async (tx) => {
      const [row] = await tx.select().from(tasks).where(and(eq(tasks.id, id), slotLost)).for('update');
      if (row === undefined) return false;
      await endTask(tx, row, { status: 'failed', error: 'device_lost' }, systemActor(row.orgId));
      return true;
    });
    if (ended) failed.push(id);
  }
  return failed;
}
