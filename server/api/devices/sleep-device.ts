import { z } from 'zod';
import { DeviceSchema } from '../../domain/devices/device-resource';
import { sleepDevice } from '../../domain/devices/device-operations';
import { actorOf } from '../../domain/keys/principal';
import { writeGated } from '../../trpc/procedures';

export const sleepDeviceProcedure = writeGated('operator:devices:write')
  .meta({ openapi: { method: 'POST', path: '/devices/{id}/sleep', tags: ['devices'], summary: 'Put a device to sleep (browser closed, profile kept)' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(DeviceSchema)
  .mutation(({ ctx, input }) => sleepDevice(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
