import { sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';

export interface OperationalCounts {
  devicesByStatus: Record<string, number>;
  tasksByStatus: Record<string, number>;
  /** Running tasks no live worker lease holds: waiting to be picked up (or taken over). */
  tasksWaitingForWorker: number;
  webhookDeliveries: { pending: number; failing: number };
  escalationDeliveries: { pending: number; failing: number };
}

/**
 * What the service holds, for the metrics scrape: one round trip, each count served by
 * the tables' status indexes. "Failing" deliveries are pending ones that already failed
 * at least once (they wait for a retry).
 */
export async function loadOperationalCounts(db: Db): Promise<OperationalCounts> {
  const [row] = await db.execute<{ devices: Record<string, number> | null; tasks: Record<string, number> | null; waiting: number; webhook_pending: number; webhook_failing: number; escalation_pending: number; escalation_failing: number }>(sql`
    select
      (select json_object_agg(status, n) from (select status, count(*)::int as n from devices group by status) d) as devices,
      (select json_object_agg(status, n) from (select status, count(*)::int as n from tasks group by status) t) as tasks,
      (select count(*)::int from tasks where status = 'running' and (lease_owner is null or lease_expires_at < now())) as waiting,
      (select count(*)::int from webhook_deliveries where status = 'pending') as webhook_pending,
      (select count(*)::int from webhook_deliveries where status = 'pending' and attempts > 0) as webhook_failing,
      (select count(*)::int from escalations where delivery_status = 'pending') as escalation_pending,
      (select count(*)::int from escalations where delivery_status = 'pending' and delivery_attempts > 0) as escalation_failing
  `);
  return {
    devicesByStatus: row?.devices ?? {},
    tasksByStatus: row?.tasks ?? {},
    tasksWaitingForWorker: row?.waiting ?? 0,
    webhookDeliveries: { pending: row?.webhook_pending ?? 0, failing: row?.webhook_failing ?? 0 },
    escalationDeliveries: { pending: row?.escalation_pending ?? 0, failing: row?.escalation_failing ?? 0 },
  };
}

/** This process's database connections by state, found by the pool's application name. */
export async function loadPoolConnections(db: Db, applicationName: string): Promise<{ active: number; idle: number }> {
  const [row] = await db.execute<{ active: number; idle: number }>(sql`
    select count(*) filter (where state <> 'idle')::int as active, count(*) filter (where state = 'idle')::int as idle
    from pg_stat_activity where application_name = ${applicationName}
  `);
  return { active: row?.active ?? 0, idle: row?.idle ?? 0 };
}
