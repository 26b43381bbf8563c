import { z } from 'zod';
import { createDevice, CreateDeviceBodySchema } from '../domain/devices/create-device';
import { deleteDevice, getDevice, sleepDevice, wakeDevice } from '../domain/devices/device-operations';
import { DeviceSchema } from '../domain/devices/device-resource';
import { listDevices, ListDevicesQuerySchema } from '../domain/devices/list-devices';
import { actorOf } from '../domain/keys/principal';
import { scoped, writeGated } from '../trpc/procedures';

// /v1/devices: a device's life (create, list, get, sleep, wake, delete).

export const createDeviceProcedure = writeGated('operator:devices:write')
  .meta({ openapi: { method: 'POST', path: '/devices', tags: ['devices'], summary: 'Create a device (a real browser), active on success' }, successStatus: 201 })
  .input(CreateDeviceBodySchema)
  .output(DeviceSchema)
  .mutation(({ ctx, input }) =>
    createDevice(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input, ctx.req.headers['idempotency-key']),
  );

export const listDevicesProcedure = scoped('operator:devices:read')
  .meta({ openapi: { method: 'GET', path: '/devices', tags: ['devices'], summary: 'List devices, newest first' } })
  .input(ListDevicesQuerySchema)
  .output(z.object({ data: z.array(DeviceSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listDevices(ctx.services.db, ctx.services.cursors, ctx.principal, input));

export const getDeviceProcedure = scoped('operator:devices:read')
  .meta({ openapi: { method: 'GET', path: '/devices/{id}', tags: ['devices'], summary: 'Get a device' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(DeviceSchema)
  .query(({ ctx, input }) => getDevice(ctx.services.db, ctx.principal, input.id));

export const sleepDeviceProcedure = writeGated('operator:devices:write')
  .meta({ openapi: { method: 'POST', path: '/devices/{id}/sleep', tags: ['devices'], summary: 'Put a device to sleep (browser closed, profile kept)' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(DeviceSchema)
  .mutation(({ ctx, input }) => sleepDevice(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));

export const wakeDeviceProcedure = writeGated('operator:devices:write')
  .meta({ openapi: { method: 'POST', path: '/devices/{id}/wake', tags: ['devices'], summary: 'Wake a device (browser started again on its profile)' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(DeviceSchema)
  .mutation(({ ctx, input }) => wakeDevice(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));

export const deleteDeviceProcedure = writeGated('operator:devices:write')
  .meta({ openapi: { method: 'DELETE', path: '/devices/{id}', tags: ['devices'], summary: 'Delete a device (browser destroyed, profile removed)' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(DeviceSchema)
  .mutation(({ ctx, input }) => deleteDevice(ctx.services, ctx.principal, actorOf(ctx.principal, ctx.requestId), input.id));
