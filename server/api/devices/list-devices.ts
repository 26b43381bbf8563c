import { z } from 'zod';
import { DeviceSchema } from '../../domain/devices/device-resource';
import { listDevices, ListDevicesQuerySchema } from '../../domain/devices/list-devices';
import { scoped } from '../../trpc/procedures';

export const listDevicesProcedure = scoped('operator:devices:read')
  .meta({ openapi: { method: 'GET', path: '/devices', tags: ['devices'], summary: 'List devices, newest first' } })
  .input(ListDevicesQuerySchema)
  .output(z.object({ data: z.array(DeviceSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listDevices(ctx.services.db, ctx.services.cursors, ctx.principal, input));
