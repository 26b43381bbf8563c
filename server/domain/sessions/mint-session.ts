import { z } from 'zod';
import type { Db } from '../../../db/client';
import { sessionModes, sessions } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { loadDeviceForCaller } from '../devices/load-device';
import { emitEvent } from '../events/emit-event';
import { actorOf, type Principal } from '../keys/principal';
import { dbNow, dbNowPlus } from '../db-clock';
import { toSessionResource, type MintedSession } from './session-resource';
import { mintSessionToken } from './session-token';

// CONTRACT.md: ttl_secs is clamped to 60..3600, default 900.
export const SESSION_TTL_MIN_SECS = 60;
export const SESSION_TTL_MAX_SECS = 3600;
export const SESSION_TTL_DEFAULT_SECS = 900;

export const MintSessionBodySchema = z.strictObject({
  mode: z.enum(sessionModes).optional(),
  /** Clamped, not refused: any integer is a request the service answers with its band. */
  ttl_secs: z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1).optional(),
});
export type MintSessionBody = z.infer<typeof MintSessionBodySchema>;

export interface MintSessionCall {
  principal: Principal;
  requestId: string;
  devicePublicId: string;
  body: MintSessionBody;
}

export function clampTtlSecs(requested: number | undefined): number {
  return Math.min(SESSION_TTL_MAX_SECS, Math.max(SESSION_TTL_MIN_SECS, requested ?? SESSION_TTL_DEFAULT_SECS));
}

/**
 * POST /v1/devices/{id}/sessions. `control` additionally needs operator:sessions:control
 * (403). The device must be active (409 device_not_ready; 410 when terminated). The
 * token is returned once; only its SHA-256 is stored.
 */
export async function mintSession(db: Db, publicUrl: string, call: MintSessionCall): Promise<MintedSession> {
  const mode = call.body.mode ?? 'watch';
  if (mode === 'control' && !call.principal.scopes.has('operator:sessions:control')) throw new ApiError('insufficient_scope');
  const ttlSecs = clampTtlSecs(call.body.ttl_secs);
  return db.transaction(async (tx) => {
    // Locked so the device cannot be deleted or slept between the check and the insert.
    const device = await loadDeviceForCaller(tx, call.principal, call.devicePublicId, { forUpdate: true });
    if (device.status === 'terminated') throw new ApiError('device_terminated');
    if (device.status !== 'active') throw new ApiError('device_not_ready');
    const { token, hash } = mintSessionToken();
    const [row] = await tx
      .insert(sessions)
      .values({
        orgId: device.orgId,
        spaceId: device.spaceId,
        deviceId: device.id,
        mode,
        tokenHash: hash,
        keyId: call.principal.keyId,
        createdAt: dbNow(),
        expiresAt: dbNowPlus(ttlSecs * 1000),
      })
      .returning();
    const session = toSessionResource(row!, publicUrl);
    await recordAudit(tx, actorOf(call.principal, call.requestId), {
      action: 'operator.session.created',
      resourceType: 'session',
      resourceId: session.id,
      spaceId: row!.spaceId,
      details: { device_id: session.device_id, mode, ttl_secs: ttlSecs },
    });
    await emitEvent(tx, { orgId: row!.orgId, spaceId: row!.spaceId, type: 'operator.session.created.v1', resource: session });
    return { ...session, session_token: token };
  });
}
