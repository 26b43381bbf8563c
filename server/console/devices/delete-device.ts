import { operatorActor, operatorPrincipal } from '../../domain/console/operator-principal';
import { DeviceSchema } from '../../domain/devices/device-resource';
import { deleteDevice } from '../../domain/devices/device-operations';
import { operatorProcedure } from '../console-procedures';
import { DeviceActionInputSchema } from './device-schemas';

/** Terminates a device as DELETE /v1/devices/{id} does (its running task fails with device_lost); audited with the operator's name. */
export const deleteDeviceProcedure = operatorProcedure
  .input(DeviceActionInputSchema)
  .output(DeviceSchema)
  .mutation(({ ctx, input }) =>
    deleteDevice(ctx.services, operatorPrincipal(input.org_id, ctx.operator.name), operatorActor(input.org_id, ctx.operator.name), input.device_id),
  );
