import { and, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, tasks } from '../../../db/schema';
import { failLostTasks } from './fail-lost-tasks';

// A parked task whose device no longer holds it in its slot: the device was deleted or
// its browser was lost while the task waited for a human.
const slotLost = sql`not exists (select 1 from ${devices} where ${devices.id} = ${tasks.deviceId} and ${devices.currentTaskId} = ${tasks.id})`;

// A parked task whose device runs another browser than the one its page was built in
// (relaunched after its host restarted without it): the page the person was asked about
// is gone, and an answer would resume on a page the task did not build.
const pageLost = sql`exists (select 1 from ${devices} where ${devices.id} = ${tasks.deviceId}
  and ${devices.browserIncarnation} is not null and ${tasks.browserIncarnation} is not null
  and ${devices.browserIncarnation} <> ${tasks.browserIncarnation})`;

/**
 * Fails, with device_lost, every parked task whose device let go of it or lost its page:
 * nothing else would end it before its escalation expires, and an answer could not
 * resume it faithfully. Its pending escalation is canceled with it (endTask).
 */
export async function failParkedTasksWithoutDevice(db: Db, limit = 100): Promise<string[]> {
  return failLostTasks(db, and(eq(tasks.status, 'needs_human'), or(slotLost, pageLost))!, { limit });
}
