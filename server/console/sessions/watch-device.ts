import { z } from 'zod';
import { watchDeviceAsOperator } from '../../domain/console/operator-live';
import { MintedSessionSchema } from '../../domain/sessions/session-resource';
import { operatorProcedure } from '../console-procedures';

/** A watch session of a device for the console's live view, minted under /v1's rules and audited with the operator's name. */
export const watchDeviceProcedure = operatorProcedure
  .input(z.object({ device_id: z.string().max(200) }))
  .output(MintedSessionSchema)
  .mutation(({ ctx, input }) => watchDeviceAsOperator(ctx.services, ctx.operator, ctx.requestId, input.device_id));
