import { z } from 'zod';
import { getTaskCache } from '../../domain/task-caches/task-cache-operations';
import { TaskCacheSchema } from '../../domain/task-caches/task-cache-resource';
import { scoped } from '../../trpc/procedures';

export const getTaskCacheProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/task_caches/{id}', tags: ['task caches'], summary: 'Get a task cache entry' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(TaskCacheSchema)
  .query(({ ctx, input }) => getTaskCache(ctx.services.db, ctx.principal, input.id));
