import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { tasks } from '../../../db/schema';
import type { ModelCallUsage } from '../../agent/model-usage';

/**
 * Adds one model request to the task's usage. Not fenced by the lease like steps are: the
 * tokens were spent whether or not the run still owns the task.
 */
export async function addModelCall(db: Db, taskId: string, usage: ModelCallUsage): Promise<void> {
  await db
    .update(tasks)
    .set({
      modelCalls: sql`${tasks.modelCalls} + 1`,
      inputTokens: sql`${tasks.inputTokens} + ${usage.inputTokens}`,
      outputTokens: sql`${tasks.outputTokens} + ${usage.outputTokens}`,
    })
    .where(eq(tasks.id, taskId));
}
