import { z } from 'zod';
import type { Db } from '../../../db/client';
import { cdpSessions } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { dbNow, dbNowPlus } from '../db-clock';
import { loadDeviceForCaller } from '../devices/load-device';
import { toPublicId } from '../ids';
import { actorOf, type Principal } from '../keys/principal';
import { iso } from '../time';
import { mintCdpSecret } from './cdp-secret';
import { auditedCdpSession, cdpUrl, type CdpSession } from './cdp-session-resource';

export const CDP_TTL_MIN_SECS = 60;
export const CDP_TTL_MAX_SECS = 3600;
export const CDP_TTL_DEFAULT_SECS = 900;

/** Unlike a live-view session's, the TTL is checked, not clamped: the issue fixes 60..3600. */
export const CreateCdpSessionBodySchema = z.strictObject({
  ttl_secs: z.number().int().min(CDP_TTL_MIN_SECS).max(CDP_TTL_MAX_SECS).optional(),
});
export type CreateCdpSessionBody = z.infer<typeof CreateCdpSessionBodySchema>;

export interface CreateCdpSessionCall {
  principal: Principal;
  requestId: string;
  devicePublicId: string;
  body: CreateCdpSessionBody;
}

/**
 * POST /v1/devices/{id}/cdp: a DevTools URL for the device. The device must be active
 * (409 device_not_ready; 410 terminated) and its task slot free (409 device_busy: a task
 * runs, or a CDP connection holds it); the slot itself is taken while a client is
 * connected (cdp-connection.ts).
 */
export async function createCdpSession(db: Db, publicUrl: string, call: CreateCdpSessionCall): Promise<CdpSession> {
  const ttlSecs = call.body.ttl_secs ?? CDP_TTL_DEFAULT_SECS;
  return db.transaction(async (tx) => {
    const device = await loadDeviceForCaller(tx, call.principal, call.devicePublicId, { forUpdate: true });
    if (device.status === 'terminated') throw new ApiError('device_terminated');
    if (device.status !== 'active') throw new ApiError('device_not_ready');
    if (device.currentTaskId !== null) throw new ApiError('device_busy');
    if (device.cdpSessionId !== null) throw new ApiError('device_busy', { message: 'A CDP connection holds the device.' });
    const { secret, hash } = mintCdpSecret();
    const [row] = await tx
      .insert(cdpSessions)
      .values({
        orgId: device.orgId,
        spaceId: device.spaceId,
        deviceId: device.id,
        keyId: call.principal.keyId,
        secretHash: hash,
        createdAt: dbNow(),
        expiresAt: dbNowPlus(ttlSecs * 1000),
      })
      .returning();
    await recordAudit(tx, actorOf(call.principal, call.requestId), {
      action: 'operator.cdp_session.created',
      ...auditedCdpSession(row!),
      details: { device_id: toPublicId('device', device.id), ttl_secs: ttlSecs },
    });
    return {
      object: 'cdp_session',
      id: toPublicId('cdpSession', row!.id),
      device_id: toPublicId('device', device.id),
      cdp_url: cdpUrl(publicUrl, row!.id, secret),
      expires_at: iso(row!.expiresAt),
    };
  });
}
