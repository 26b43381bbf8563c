import { z } from 'zod';
import { deviceStatuses, type devices } from '../../../db/schema';
import { toPublicId } from '../ids';
import { iso } from '../time';

export const DeviceStatusSchema = z.enum(deviceStatuses);

/** The Device resource exactly as the API returns it (spec "Device"). */
export const DeviceSchema = z.object({
  id: z.string(),
  object: z.literal('device'),
  name: z.string(),
  region: z.string(),
  space_id: z.string(),
  status: DeviceStatusSchema,
  created_at: z.string(),
  current_task_id: z.string().nullable(),
  last_active_at: z.string(),
});
export type Device = z.infer<typeof DeviceSchema>;

export type DeviceRow = typeof devices.$inferSelect;

export function toDeviceResource(row: DeviceRow): Device {
  return {
    id: toPublicId('device', row.id),
    object: 'device',
    name: row.name,
    region: row.region,
    space_id: row.spaceId,
    status: row.status,
    created_at: iso(row.createdAt),
    current_task_id: row.currentTaskId === null ? null : toPublicId('task', row.currentTaskId),
    last_active_at: iso(row.lastActiveAt),
  };
}
