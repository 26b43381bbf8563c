import { DeviceSchema } from '../../domain/devices/device-resource';
import { createDevice, CreateDeviceBodySchema } from '../../domain/devices/create-device';
import { actorOf } from '../../domain/keys/principal';
import { writeGated } from '../../trpc/procedures';

export const createDeviceProcedure = writeGated('operator:devices:write')
  .meta({ openapi: { method: 'POST', path: '/devices', tags: ['devices'], summary: 'Create a device (a real browser), active on success' }, successStatus: 201 })
  .input(CreateDeviceBodySchema)
  .output(DeviceSchema)
  .mutation(({ ctx, input }) =>
    createDevice(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input, ctx.req.headers['idempotency-key']),
  );
