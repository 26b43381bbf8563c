import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../../db/client';
import { spaces } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { isUuid } from '../ids';
import type { Principal } from '../keys/principal';
import { isOrganizationWide } from './space-access';

/**
 * A `space_id` named in a request body (CONTRACT.md): an unknown Space or one of another
 * organization is 400 invalid_request on `space_id`; a Space of the organization that
 * the key does not hold is 403 insufficient_scope. Returns the normalised id.
 */
export async function resolveRequestedSpace(db: DbOrTx, principal: Principal, requested: string): Promise<string> {
  const spaceId = requested.toLowerCase();
  const unknownSpace = new ApiError('invalid_request', { param: 'space_id', message: 'The space_id does not name a Space of this organization.' });
  if (!isUuid(spaceId)) throw unknownSpace;
  const [space] = await db
    .select({ id: spaces.id })
    .from(spaces)
    .where(and(eq(spaces.id, spaceId), eq(spaces.orgId, principal.orgId)));
  if (space === undefined) throw unknownSpace;
  if (!isOrganizationWide(principal) && !principal.spaceIds.includes(spaceId)) throw new ApiError('insufficient_scope');
  return spaceId;
}
