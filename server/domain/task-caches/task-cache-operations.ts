import { and, desc, eq, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { taskCaches } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { toPublicId } from '../ids';
import type { Actor, Principal } from '../keys/principal';
import { olderThan, PageQuerySchema, type CursorCodec, type Page } from '../pagination/cursor';
import { listSpace } from '../spaces/space-access';
import { loadTaskCacheForCaller, toTaskCacheResource, type TaskCache } from './task-cache-resource';

export const ListTaskCachesQuerySchema = PageQuerySchema.extend({ space_id: z.uuid().optional() }).strict();
export type ListTaskCachesQuery = z.infer<typeof ListTaskCachesQuerySchema>;

/** GET /v1/task_caches: newest first; a Space-scoped key must name a Space it holds. */
export async function listTaskCaches(db: Db, cursors: CursorCodec, principal: Principal, query: ListTaskCachesQuery): Promise<Page<TaskCache>> {
  const spaceId = listSpace(principal, query.space_id);
  const list = `task_caches:${principal.orgId}:${spaceId ?? '*'}`;
  const position = query.cursor === undefined ? null : cursors.decode(list, query.cursor);
  const conditions: (SQL | undefined)[] = [
    eq(taskCaches.orgId, principal.orgId),
    spaceId === null ? undefined : eq(taskCaches.spaceId, spaceId),
    olderThan(taskCaches.createdAt, taskCaches.id, position),
  ];
  const rows = await db
    .select()
    .from(taskCaches)
    .where(and(...conditions))
    .orderBy(desc(taskCaches.createdAt), desc(taskCaches.id))
    .limit(query.limit + 1);
  return cursors.page(list, rows, query.limit, toTaskCacheResource);
}

export async function getTaskCache(db: Db, principal: Principal, publicId: string): Promise<TaskCache> {
  return toTaskCacheResource(await loadTaskCacheForCaller(db, principal, publicId));
}

/** DELETE /v1/task_caches/{id}: the next task with its key runs with the planner (a miss). */
export async function deleteTaskCache(db: Db, principal: Principal, actor: Actor, publicId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const current = await loadTaskCacheForCaller(tx, principal, publicId, { forUpdate: true });
    await tx.delete(taskCaches).where(eq(taskCaches.id, current.id));
    await recordAudit(tx, actor, {
      action: 'operator.task_cache.deleted',
      resourceType: 'task_cache',
      resourceId: toPublicId('taskCache', current.id),
      spaceId: current.spaceId,
      details: { key: current.key },
    });
  });
}
