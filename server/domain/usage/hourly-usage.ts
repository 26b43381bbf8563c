import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { ApiError } from '../../core/errors';
import { timestampParam } from '../devices/metering';
import { isUuid } from '../ids';

export const HourlyUsageSchema = z.array(
  z.object({
    /** Start of the hour (UTC). */
    hour: z.string(),
    device_seconds: z.number().int(),
    tasks: z.number().int(),
    steps: z.number().int(),
  }),
);
export type HourlyUsage = z.infer<typeof HourlyUsageSchema>;

/**
 * The organization's usage over the last 24 h, hour by hour (the 24 hours ending with the
 * current one): device-seconds of the `active` periods clipped to each hour (open
 * periods counted up to `now`, as GET /v1/usage counts them), tasks created and steps
 * recorded. The console's usage chart.
 */
export async function hourlyUsage(db: Db, orgId: string, now = new Date()): Promise<HourlyUsage> {
  if (!isUuid(orgId)) throw new ApiError('organization_not_found');
  const at = timestampParam(now);
  const rows = await db.execute<{ hour: Date | string; device_seconds: string; tasks: string; steps: string }>(sql`
    with hours as (
      select generate_series(date_trunc('hour', ${at}) - interval '23 hours', date_trunc('hour', ${at}), interval '1 hour') as start
    )
    select
      hours.start as hour,
      (select coalesce(sum(greatest(0, extract(epoch from (
          least(coalesce(p.ended_at, ${at}), ${at}, hours.start + interval '1 hour') - greatest(p.started_at, hours.start)
        )))), 0)
        from device_active_periods p
        where p.org_id = ${orgId} and p.started_at < hours.start + interval '1 hour' and (p.ended_at is null or p.ended_at > hours.start)) as device_seconds,
      (select count(*) from tasks t where t.org_id = ${orgId} and t.created_at >= hours.start and t.created_at < hours.start + interval '1 hour') as tasks,
      (select count(*) from task_steps s where s.org_id = ${orgId} and s.created_at >= hours.start and s.created_at < hours.start + interval '1 hour') as steps
    from hours
    order by hours.start
  `);
  return [...rows].map((row) => ({
    hour: new Date(row.hour).toISOString(),
    device_seconds: Math.round(Number(row.device_seconds)),
    tasks: Number(row.tasks),
    steps: Number(row.steps),
  }));
}
