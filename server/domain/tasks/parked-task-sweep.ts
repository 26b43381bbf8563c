import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, tasks } from '../../../db/schema';
import { failLostTasks } from './fail-lost-tasks';

// A parked task whose device no longer holds it in its slot: the device was deleted or
// its browser was lost while the task waited for a human.
const slotLost = and(
  eq(tasks.status, 'needs_human'),
  sql`not exists (select 1 from ${devices} where ${devices.id} = ${tasks.deviceId} and ${devices.currentTaskId} = ${tasks.id})`,
)!;

/**
 * Fails, with device_lost, every parked task whose device let go of it: nothing else
 * would end it before its escalation expires, and an answer could not resume it on a
 * browser that is gone. Its pending escalation is canceled with it (endTask).
 */
export async function failParkedTasksWithoutDevice(db: Db, limit = 100): Promise<string[]> {
  return failLostTasks(db, slotLost, { limit });
}
