import { z } from 'zod';
import { listTaskFiles, TaskFileSchema } from '../../domain/files/task-files';
import { PageQuerySchema } from '../../domain/pagination/cursor';
import { scoped } from '../../trpc/procedures';

export const listTaskFilesProcedure = scoped('operator:tasks:read')
  .meta({ openapi: { method: 'GET', path: '/tasks/{id}/files', tags: ['tasks'], summary: "List the files a task's page downloaded, newest first" } })
  .input(PageQuerySchema.extend({ id: z.string().max(200) }).strict())
  .output(z.object({ data: z.array(TaskFileSchema), next_cursor: z.string() }))
  .query(({ ctx, input: { id, ...page } }) => listTaskFiles(ctx.services.db, ctx.services.cursors, ctx.principal, id, page));
