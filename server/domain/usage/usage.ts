import { and, count, eq, gt, sum } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { tasks, taskSteps } from '../../../db/schema';
import type { Config } from '../../core/config';
import { ApiError } from '../../core/errors';
import type { Principal } from '../keys/principal';
import { assertSpaceAccess } from '../spaces/space-access';
import { DAY_MS, deviceSecondsInWindow } from '../devices/metering';
import { sessionSecondsInWindow } from '../sessions/session-metering';
import { cdpSecondsInWindow } from '../cdp/cdp-metering';

export const UsageQuerySchema = z.strictObject({
  product: z.string().max(100).optional(),
});
export type UsageQuery = z.infer<typeof UsageQuerySchema>;

export const UsageRowSchema = z.object({
  kind: z.enum(['device_duration', 'session_duration', 'task', 'step', 'operator.model.input_tokens', 'operator.model.output_tokens']),
  resource: z.enum(['device', 'session', 'task']),
  unit: z.enum(['second', 'count', 'token']),
  window: z.literal('rolling_24h'),
  quantity: z.number().int(),
  cost_micro: z.number().int().optional(),
});
export type UsageRow = z.infer<typeof UsageRowSchema>;

export const UsageSchema = z.object({ data: z.array(UsageRowSchema) });
export type Usage = z.infer<typeof UsageSchema>;

/**
 * GET /v1/usage: the organization's metered rows over the rolling 24 h ending now.
 * Usage is an organization-level report (quotas are per organization too), so like
 * other organization-level resources it needs an organization-wide key: a
 * Space-scoped key gets 403 insufficient_scope rather than other Spaces' figures.
 * Sessions count from mint to revocation or expiry (session-metering.ts), CDP sessions
 * from creation to close or expiry (cdp-metering.ts). Model tokens,
 * like tasks and steps, belong to the tasks created in the window (the counts kept on each
 * task row, task-usage.ts).
 */
export async function getUsage(db: Db, prices: Config['prices'], principal: Principal, query: UsageQuery, now = new Date()): Promise<Usage> {
  if ((query.product ?? 'operator') !== 'operator') {
    throw new ApiError('invalid_request', { param: 'product', message: 'Only the operator product is served.' });
  }
  assertSpaceAccess(principal, null);
  const windowStart = new Date(now.getTime() - DAY_MS);
  const tasksInWindow = and(eq(tasks.orgId, principal.orgId), gt(tasks.createdAt, windowStart));
  const [deviceSeconds, liveViewSeconds, cdpSeconds, [taskTotals], [stepCount]] = await Promise.all([
    deviceSecondsInWindow(db, principal.orgId, now),
    sessionSecondsInWindow(db, principal.orgId, now),
    cdpSecondsInWindow(db, principal.orgId, now),
    // sum() of integers is a PostgreSQL numeric, which arrives as a string; mapWith makes it a number.
    db
      .select({ n: count(), inputTokens: sum(tasks.inputTokens).mapWith(Number), outputTokens: sum(tasks.outputTokens).mapWith(Number) })
      .from(tasks)
      .where(tasksInWindow),
    db.select({ n: count() }).from(taskSteps).where(and(eq(taskSteps.orgId, principal.orgId), gt(taskSteps.createdAt, windowStart))),
  ]);
  const sessionSeconds = liveViewSeconds + cdpSeconds;
  return {
    data: [
      usageRow('device_duration', 'device', 'second', deviceSeconds, prices.deviceSecondMicro),
      usageRow('session_duration', 'session', 'second', sessionSeconds, prices.sessionSecondMicro),
      usageRow('task', 'task', 'count', taskTotals?.n ?? 0, prices.taskMicro),
      usageRow('step', 'task', 'count', stepCount?.n ?? 0, prices.stepMicro),
      usageRow('operator.model.input_tokens', 'task', 'token', taskTotals?.inputTokens ?? 0, prices.inputTokenMicro),
      usageRow('operator.model.output_tokens', 'task', 'token', taskTotals?.outputTokens ?? 0, prices.outputTokenMicro),
    ],
  };
}

function usageRow(kind: UsageRow['kind'], resource: UsageRow['resource'], unit: UsageRow['unit'], quantity: number, price: number | null): UsageRow {
  return { kind, resource, unit, window: 'rolling_24h', quantity, ...(price === null ? {} : { cost_micro: quantity * price }) };
}
