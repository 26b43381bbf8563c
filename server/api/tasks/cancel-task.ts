import { z } from 'zod';
import { cancelTask } from '../../domain/tasks/cancel-task';
import { TaskSchema } from '../../domain/tasks/task-resource';
import { writeGated } from '../../trpc/procedures';

export const cancelTaskProcedure = writeGated('operator:tasks:write')
  .meta({ openapi: { method: 'POST', path: '/tasks/{id}/cancel', tags: ['tasks'], summary: 'Cancel a running or parked task' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(TaskSchema)
  .mutation(({ ctx, input }) => cancelTask(ctx.services.db, ctx.principal, ctx.requestId, input.id));
