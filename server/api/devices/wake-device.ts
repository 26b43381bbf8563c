import { z } from 'zod';
import { DeviceSchema } from '../../domain/devices/device-resource';
import { wakeDevice } from '../../domain/devices/device-operations';
import { actorOf } from '../../domain/keys/principal';
import { writeGated } from '../../trpc/procedures';

export const wakeDeviceProcedure = writeGated('operator:devices:write')
  .meta({ openapi: { method: 'POST', path: '/devices/{id}/wake', tags: ['devices'], summary: 'Wake a device (browser started again on its profile)' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(DeviceSchema)
  .mutation(({ ctx, input }) => wakeDevice(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
