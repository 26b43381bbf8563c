import { z } from 'zod';
import { DeviceSchema } from '../../domain/devices/device-resource';
import { deleteDevice } from '../../domain/devices/device-operations';
import { actorOf } from '../../domain/keys/principal';
import { writeGated } from '../../trpc/procedures';

export const deleteDeviceProcedure = writeGated('operator:devices:write')
  .meta({ openapi: { method: 'DELETE', path: '/devices/{id}', tags: ['devices'], summary: 'Delete a device (browser destroyed, profile removed)' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(DeviceSchema)
  .mutation(({ ctx, input }) => deleteDevice(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
