import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../../db/client';
import { devices } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { assertSpaceAccess } from '../spaces/space-access';
import type { DeviceRow } from './device-resource';

/**
 * The caller's device by public id. Malformed, absent and other organizations' ids are
 * the same 404 device_not_found; a device in a Space of the caller's organization that
 * the key does not hold is 403 insufficient_scope. `forUpdate` locks the row for the
 * rest of the caller's transaction (state changes serialize on it).
 */
export async function loadDeviceForCaller(
  db: DbOrTx,
  principal: Principal,
  publicId: string,
  options: { forUpdate?: boolean } = {},
): Promise<DeviceRow> {
  const id = parsePublicId('device', publicId);
  if (id === null) throw new ApiError('device_not_found');
  const query = db
    .select()
    .from(devices)
    .where(and(eq(devices.id, id), eq(devices.orgId, principal.orgId)));
  const [row] = options.forUpdate === true ? await query.for('update') : await query;
  if (row === undefined) throw new ApiError('device_not_found');
  assertSpaceAccess(principal, row.spaceId);
  return row;
}
