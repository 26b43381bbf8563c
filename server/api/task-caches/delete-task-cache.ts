import { z } from 'zod';
import { actorOf } from '../../domain/keys/principal';
import { deleteTaskCache } from '../../domain/task-caches/task-cache-operations';
import { writeGated } from '../../trpc/procedures';

export const deleteTaskCacheProcedure = writeGated('operator:tasks:write')
  .meta({ openapi: { method: 'DELETE', path: '/task_caches/{id}', tags: ['task caches'], summary: 'Delete a task cache entry' }, successStatus: 204 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => deleteTaskCache(ctx.services.db, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
