import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { taskCaches } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { assertSpaceAccess } from '../spaces/space-access';
import { iso, isoOrNull } from '../time';

/** One stored step: the action (targets as fingerprints, secrets as placeholders), its text and note, and the page it was taken on. */
export const TaskCacheStepSchema = z.object({
  action: z.record(z.string(), z.json()),
  described: z.string(),
  note: z.string().nullable(),
  page: z.string(),
});

/** The Task cache resource exactly as the API returns it (docs/api.md "Task caches"). */
export const TaskCacheSchema = z.object({
  id: z.string(),
  object: z.literal('task_cache'),
  key: z.string(),
  space_id: z.string(),
  prompt: z.string(),
  steps: z.array(TaskCacheStepSchema),
  /** Tasks that replayed the entry to success without the planner. */
  hits: z.number().int(),
  /** Tasks whose replay the planner took over and that updated the entry. */
  heals: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  last_used_at: z.string().nullable(),
});
export type TaskCache = z.infer<typeof TaskCacheSchema>;

export type TaskCacheRow = typeof taskCaches.$inferSelect;

export function toTaskCacheResource(row: TaskCacheRow): TaskCache {
  return {
    id: toPublicId('taskCache', row.id),
    object: 'task_cache',
    key: row.key,
    space_id: row.spaceId,
    prompt: row.prompt,
    steps: row.steps as TaskCache['steps'],
    hits: row.hits,
    heals: row.heals,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    last_used_at: isoOrNull(row.lastUsedAt),
  };
}

/**
 * The caller's entry by public id: malformed, absent (deleted included) and other
 * organizations' ids are the same 404; an entry of a Space the key does not hold is 403.
 */
export async function loadTaskCacheForCaller(db: DbOrTx, principal: Principal, publicId: string, options: { forUpdate?: boolean } = {}): Promise<TaskCacheRow> {
  const id = parsePublicId('taskCache', publicId);
  if (id === null) throw new ApiError('task_cache_not_found');
  const query = db
    .select()
    .from(taskCaches)
    .where(and(eq(taskCaches.id, id), eq(taskCaches.orgId, principal.orgId)));
  const [row] = options.forUpdate === true ? await query.for('update') : await query;
  if (row === undefined) throw new ApiError('task_cache_not_found');
  assertSpaceAccess(principal, row.spaceId);
  return row;
}
