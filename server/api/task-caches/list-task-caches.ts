import { z } from 'zod';
import { listTaskCaches, ListTaskCachesQuerySchema } from '../../domain/task-caches/task-cache-operations';
import { TaskCacheSchema } from '../../domain/task-caches/task-cache-resource';
import { scoped } from '../../trpc/procedures';

export const listTaskCachesProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/task_caches', tags: ['task caches'], summary: 'List task cache entries, newest first' } })
  .input(ListTaskCachesQuerySchema)
  .output(z.object({ data: z.array(TaskCacheSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listTaskCaches(ctx.services.db, ctx.services.cursors, ctx.principal, input));
