import { z } from 'zod';
import { PageQuerySchema } from '../../domain/pagination/cursor';
import { listDeviceTasks } from '../../domain/tasks/load-task';
import { TaskSchema } from '../../domain/tasks/task-resource';
import { scoped } from '../../trpc/procedures';

export const listDeviceTasksProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/devices/{id}/tasks', tags: ['tasks'], summary: "List a device's tasks, newest first" } })
  .input(PageQuerySchema.extend({ id: z.string().max(200) }).strict())
  .output(z.object({ data: z.array(TaskSchema), next_cursor: z.string() }))
  .query(({ ctx, input: { id, ...page } }) => listDeviceTasks(ctx.services.db, ctx.services.cursors, ctx.principal, id, page));
