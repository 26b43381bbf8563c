import { z } from 'zod';
import { DeviceSchema } from '../../domain/devices/device-resource';
import { getDevice } from '../../domain/devices/device-operations';
import { scoped } from '../../trpc/procedures';

export const getDeviceProcedure = scoped('operator:devices:read')
  .meta({ openapi: { method: 'GET', path: '/devices/{id}', tags: ['devices'], summary: 'Get a device' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(DeviceSchema)
  .query(({ ctx, input }) => getDevice(ctx.services.db, ctx.principal, input.id));
