import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { sessionModes, sessions } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { socketUrl } from '../socket-paths';
import { assertSpaceAccess } from '../spaces/space-access';
import { iso, isoOrNull } from '../time';

/** The Session resource as GET returns it: the spec's fields plus created_at and revoked_at. */
export const SessionSchema = z.object({
  id: z.string(),
  object: z.literal('session'),
  device_id: z.string(),
  mode: z.enum(sessionModes),
  created_at: z.string(),
  expires_at: z.string(),
  revoked_at: z.string().nullable(),
  ws_url: z.string(),
});
export type Session = z.infer<typeof SessionSchema>;

/** The mint response: the resource plus the token, the only time it is shown. */
export const MintedSessionSchema = SessionSchema.extend({ session_token: z.string() });
export type MintedSession = z.infer<typeof MintedSessionSchema>;

export type SessionRow = typeof sessions.$inferSelect;

export function toSessionResource(row: SessionRow, publicUrl: string): Session {
  return {
    id: toPublicId('session', row.id),
    object: 'session',
    device_id: toPublicId('device', row.deviceId),
    mode: row.mode,
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    revoked_at: isoOrNull(row.revokedAt),
    // The token never goes in it.
    ws_url: socketUrl(publicUrl, 'liveView', toPublicId('session', row.id)),
  };
}

/** Live: neither revoked nor past its expiry. */
export function isSessionLive(row: Pick<SessionRow, 'revokedAt' | 'expiresAt'>, now = new Date()): boolean {
  return row.revokedAt === null && row.expiresAt > now;
}

/**
 * The caller's session by public id: malformed, absent and other organizations' ids are
 * the same 404 session_not_found; one in a Space the key does not hold is 403.
 */
export async function loadSessionForCaller(db: DbOrTx, principal: Principal, publicId: string, options: { forUpdate?: boolean } = {}): Promise<SessionRow> {
  const id = parsePublicId('session', publicId);
  if (id === null) throw new ApiError('session_not_found');
  const query = db
    .select()
    .from(sessions)
    .where(and(eq(sessions.id, id), eq(sessions.orgId, principal.orgId)));
  const [row] = options.forUpdate === true ? await query.for('update') : await query;
  if (row === undefined) throw new ApiError('session_not_found');
  assertSpaceAccess(principal, row.spaceId);
  return row;
}

/** GET /v1/sessions/{id}: the session, never its token (only its hash is stored). */
export async function getSession(db: DbOrTx, publicUrl: string, principal: Principal, publicId: string): Promise<Session> {
  return toSessionResource(await loadSessionForCaller(db, principal, publicId), publicUrl);
}
