import { z } from 'zod';
import { OperatorTakeoverSchema, takeOverAsOperator } from '../../domain/console/operator-live';
import { operatorProcedure } from '../console-procedures';

/** Takes a device over from the console: a control session and its takeover hold, under /v1's rules. */
export const takeOverDeviceProcedure = operatorProcedure
  .input(z.object({ device_id: z.string().max(200), reason: z.string().max(1000).optional() }))
  .output(OperatorTakeoverSchema)
  .mutation(({ ctx, input }) => takeOverAsOperator(ctx.services, ctx.operator, ctx.requestId, input.device_id, input.reason));
