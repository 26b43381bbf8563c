import { router } from '../trpc/init';
import { listAuditEventsProcedure } from './audit/list-audit-events';
import { createDeviceProcedure } from './devices/create-device';
import { deleteDeviceProcedure } from './devices/delete-device';
import { getDeviceProcedure } from './devices/get-device';
import { listDevicesProcedure } from './devices/list-devices';
import { sleepDeviceProcedure } from './devices/sleep-device';
import { wakeDeviceProcedure } from './devices/wake-device';
import { getUsageProcedure } from './usage/get-usage';
import { getWhoami } from './whoami/get-whoami';

// One entry per REST route; each procedure file declares its own method and path.
export const appRouter = router({
  whoami: getWhoami,
  listAuditEvents: listAuditEventsProcedure,
  createDevice: createDeviceProcedure,
  listDevices: listDevicesProcedure,
  getDevice: getDeviceProcedure,
  sleepDevice: sleepDeviceProcedure,
  wakeDevice: wakeDeviceProcedure,
  deleteDevice: deleteDeviceProcedure,
  getUsage: getUsageProcedure,
});

export type AppRouter = typeof appRouter;
