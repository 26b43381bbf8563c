import { operatorActor, operatorPrincipal } from '../../domain/console/operator-principal';
import { DeviceSchema } from '../../domain/devices/device-resource';
import { sleepDevice } from '../../domain/devices/device-operations';
import { operatorProcedure } from '../console-procedures';
import { DeviceActionInputSchema } from './device-schemas';

/** Puts a device to sleep as POST /v1/devices/{id}/sleep does (409 device_busy while it runs a task); audited with the operator's name. */
export const sleepDeviceProcedure = operatorProcedure
  .input(DeviceActionInputSchema)
  .output(DeviceSchema)
  .mutation(({ ctx, input }) =>
    sleepDevice(ctx.services, operatorPrincipal(input.org_id, ctx.operator.name), operatorActor(input.org_id, ctx.operator.name), input.device_id),
  );
