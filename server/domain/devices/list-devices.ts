import { and, desc, eq, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { devices } from '../../../db/schema';
import type { Principal } from '../keys/principal';
import { olderThan, PageQuerySchema, type CursorCodec, type Page } from '../pagination/cursor';
import { listSpace } from '../spaces/space-access';
import { DeviceStatusSchema, toDeviceResource, type Device } from './device-resource';

export const ListDevicesQuerySchema = PageQuerySchema.extend({
  status: DeviceStatusSchema.optional(),
  space_id: z.uuid().optional(),
}).strict();
export type ListDevicesQuery = z.infer<typeof ListDevicesQuerySchema>;

/** GET /v1/devices: newest first, keyset pages; a Space-scoped key must name a Space it holds. */
export async function listDevices(db: Db, cursors: CursorCodec, principal: Principal, query: ListDevicesQuery): Promise<Page<Device>> {
  const spaceId = listSpace(principal, query.space_id);
  const list = `devices:${principal.orgId}:${spaceId ?? '*'}:${query.status ?? '*'}`;
  const position = query.cursor === undefined ? null : cursors.decode(list, query.cursor);
  const conditions: (SQL | undefined)[] = [
    eq(devices.orgId, principal.orgId),
    spaceId === null ? undefined : eq(devices.spaceId, spaceId),
    query.status === undefined ? undefined : eq(devices.status, query.status),
    olderThan(devices.createdAt, devices.id, position),
  ];
  const rows = await db
    .select()
    .from(devices)
    .where(and(...conditions))
    .orderBy(desc(devices.createdAt), desc(devices.id))
    .limit(query.limit + 1);
  return cursors.page(list, rows, query.limit, toDeviceResource);
}
