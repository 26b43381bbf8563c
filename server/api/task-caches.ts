import { z } from 'zod';
import { actorOf } from '../domain/keys/principal';
import { deleteTaskCache, getTaskCache, listTaskCaches, ListTaskCachesQuerySchema } from '../domain/task-caches/task-cache-operations';
import { TaskCacheSchema } from '../domain/task-caches/task-cache-resource';
import { scoped, writeGated } from '../trpc/procedures';

// /v1/task_caches: the replay cache's entries.

export const listTaskCachesProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/task_caches', tags: ['task caches'], summary: 'List task cache entries, newest first' } })
  .input(ListTaskCachesQuerySchema)
  .output(z.object({ data: z.array(TaskCacheSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listTaskCaches(ctx.services.db, ctx.services.cursors, ctx.principal, input));

export const getTaskCacheProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/task_caches/{id}', tags: ['task caches'], summary: 'Get a task cache entry' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(TaskCacheSchema)
  .query(({ ctx, input }) => getTaskCache(ctx.services.db, ctx.principal, input.id));

export const deleteTaskCacheProcedure = writeGated('operator:tasks:write')
  .meta({ openapi: { method: 'DELETE', path: '/task_caches/{id}', tags: ['task caches'], summary: 'Delete a task cache entry' }, successStatus: 204 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => deleteTaskCache(ctx.services.db, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
