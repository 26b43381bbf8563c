import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { cdpSessions } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { socketUrl } from '../socket-paths';
import { assertSpaceAccess } from '../spaces/space-access';

/** POST /v1/devices/{id}/cdp's answer; `cdp_url` (with its secret) is shown only here. */
export const CdpSessionSchema = z.object({
  object: z.literal('cdp_session'),
  id: z.string(),
  device_id: z.string(),
  cdp_url: z.string(),
  expires_at: z.string(),
});
export type CdpSession = z.infer<typeof CdpSessionSchema>;

export type CdpSessionRow = typeof cdpSessions.$inferSelect;

/** The DevTools socket of a CDP session with its secret, on the API origin. */
export function cdpUrl(publicUrl: string, cdpSessionId: string, secret: string): string {
  return `${socketUrl(publicUrl, 'cdp', toPublicId('cdpSession', cdpSessionId))}?token=${secret}`;
}

/** Not closed and not past its expiry. */
export function isCdpSessionOpen(row: Pick<CdpSessionRow, 'closedAt' | 'expiresAt'>, now = new Date()): boolean {
  return row.closedAt === null && row.expiresAt > now;
}

/**
 * The caller's CDP session by public id: malformed, absent and other organizations' ids
 * are the same 404 cdp_session_not_found; one in a Space the key does not hold is 403.
 * Locked for the caller's transaction unless `lock` is `false` (a read, such as its recording's).
 */
export async function loadCdpSessionForCaller(db: DbOrTx, principal: Principal, publicId: string, lock = true): Promise<CdpSessionRow> {
  const id = parsePublicId('cdpSession', publicId);
  if (id === null) throw new ApiError('cdp_session_not_found');
  const query = db
    .select()
    .from(cdpSessions)
    .where(and(eq(cdpSessions.id, id), eq(cdpSessions.orgId, principal.orgId)));
  const [row] = lock ? await query.for('update') : await query;
  if (row === undefined) throw new ApiError('cdp_session_not_found');
  assertSpaceAccess(principal, row.spaceId);
  return row;
}

export function auditedCdpSession(row: CdpSessionRow): { resourceType: string; resourceId: string; spaceId: string } {
  return { resourceType: 'cdp_session', resourceId: toPublicId('cdpSession', row.id), spaceId: row.spaceId };
}
