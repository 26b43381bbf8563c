import { z } from 'zod';
import { getTask } from '../../domain/tasks/load-task';
import { TaskSchema } from '../../domain/tasks/task-resource';
import { scoped } from '../../trpc/procedures';

export const getTaskProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/tasks/{id}', tags: ['tasks'], summary: 'Get a task' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(TaskSchema)
  .query(({ ctx, input }) => getTask(ctx.services.db, ctx.principal, input.id));
