import { z } from 'zod';
import { submitTask } from '../../domain/tasks/submit-task';
import { SubmitTaskBodySchema } from '../../domain/tasks/task-input';
import { TaskSchema } from '../../domain/tasks/task-resource';
import { writeGatedOnDevice } from './device-first';

export const submitTaskProcedure = writeGatedOnDevice('operator:tasks:write')
  .meta({ openapi: { method: 'POST', path: '/devices/{id}/tasks', tags: ['tasks'], summary: "Submit a task to a device's single task slot" }, successStatus: 202 })
  .input(SubmitTaskBodySchema.extend({ id: z.string().max(200) }).strict())
  .output(TaskSchema)
  .mutation(({ ctx, input: { id: _pathId, ...body } }) =>
    submitTask(ctx.services, { principal: ctx.principal, requestId: ctx.requestId, device: ctx.device, body, idempotencyKey: ctx.req.headers['idempotency-key'] }),
  );
