import { operatorActor, operatorPrincipal } from '../../domain/console/operator-principal';
import { DeviceSchema } from '../../domain/devices/device-resource';
import { wakeDevice } from '../../domain/devices/device-operations';
import { operatorProcedure } from '../console-procedures';
import { DeviceActionInputSchema } from './device-schemas';

/** Wakes a device as POST /v1/devices/{id}/wake does, quotas included; audited with the operator's name. */
export const wakeDeviceProcedure = operatorProcedure
  .input(DeviceActionInputSchema)
  .output(DeviceSchema)
  .mutation(({ ctx, input }) =>
    wakeDevice(ctx.services, operatorPrincipal(input.org_id, ctx.operator.name), operatorActor(input.org_id, ctx.operator.name), input.device_id),
  );
