import { z } from 'zod';
import { deviceForOperator, OperatorDeviceViewSchema } from '../../domain/console/operator-live';
import { operatorProcedure } from '../console-procedures';

/** One device of any organization: status, current task, the escalation it waits on, whether it is held (404 device_not_found). */
export const getDeviceProcedure = operatorProcedure
  .input(z.object({ id: z.string().max(200) }))
  .output(OperatorDeviceViewSchema)
  .query(({ ctx, input }) => deviceForOperator(ctx.services.db, input.id));
