import { and, eq, isNotNull, isNull } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../../db/client';
import { apiKeys, organizations, spaces } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { isUuid } from '../ids';
import { formatApiKey, generateKeyId, generateSecret, type KeyEnv } from '../keys/api-key-format';
import { notifyKeyRevoked } from '../keys/key-revocations';
import { revokeGrantsOfKey } from '../mcp-oauth/revoke-grant';
import { hashSecret } from '../secret-hash';
import { systemActor } from '../keys/principal';
import { isScope, scopes as publishedScopes } from '../keys/scopes';
import { checkDestination, type DestinationRefusal } from '../../net/destination';
import { revokeSessionsOfKey } from '../sessions/session-operations';
import { generateWebhookSecret } from '../webhooks/signature';
import type { CreatedApiKey, CreatedOrganization, CreatedSpace, RevokedApiKey, RotatedEscalationSecret, UpdatedOrganization } from './operator-admin-results';

// What the preview's operators do: create organizations, Spaces and keys, revoke keys,
// change an organization's quotas and escalation URL, rotate its escalation signing secret. Used by the admin CLI and the
// console; every change is audited in its own transaction. Refusals are ApiErrors of the
// one table, as everywhere in the domain.

/**
 * Who made an operator change, recorded in its audit details (the audit `actor` is
 * `system`: CONTRACT.md allows a key id or `system`, and operators hold no API key).
 */
export type AdminOrigin = { via: 'cli' } | { via: 'console'; operator: string };
const CLI: AdminOrigin = { via: 'cli' };

export interface NewOrganization {
  name: string;
  entitled: boolean;
  maxDevices: number | null;
  maxDeviceSeconds: number | null;
  escalationUrl: string | null;
}

const ESCALATION_URL_REFUSALS: Record<Exclude<DestinationRefusal, 'dns_failure'>, string> = {
  invalid_url: 'The escalation URL is not a valid absolute URL.',
  unsupported_scheme: 'The escalation URL must use https or http.',
  credentials_in_url: 'The escalation URL must not contain a user name or password.',
  blocked_address: 'The escalation URL resolves to a loopback, private, link-local or metadata address.',
};

/**
 * Refuses an escalation URL that deliveries would refuse anyway (CONTRACT.md: the webhook
 * destination rules). A name that does not resolve yet is accepted: delivery resolves it
 * again on every attempt.
 */
async function checkEscalationUrl(url: string, allowPrivate: boolean): Promise<void> {
  const check = await checkDestination(url, { allowPrivate });
  if (!check.ok && check.reason !== 'dns_failure') throw new ApiError('invalid_request', { param: 'escalation_url', message: ESCALATION_URL_REFUSALS[check.reason] });
}

/**
 * An operator's new organization (`org:create`, the console): its escalation URL refused
 * first if deliveries would refuse it, then the organization created. `createOrganization`
 * alone trusts its input (tests and benchmarks set up loopback destinations with it).
 */
export async function createCheckedOrganization(
  db: Db,
  input: NewOrganization,
  { allowPrivateDestinations, origin = CLI }: { allowPrivateDestinations: boolean; origin?: AdminOrigin },
): Promise<CreatedOrganization> {
  if (input.escalationUrl !== null) await checkEscalationUrl(input.escalationUrl, allowPrivateDestinations);
  return createOrganization(db, input, origin);
}

export async function createOrganization(db: Db, input: NewOrganization, origin: AdminOrigin = CLI): Promise<CreatedOrganization> {
  const escalationSigningSecret = input.escalationUrl === null ? null : generateWebhookSecret();
  return db.transaction(async (tx) => {
    const [org] = await tx
      .insert(organizations)
      .values({ ...input, escalationSigningSecret })
      .returning({ id: organizations.id });
    await recordAudit(tx, systemActor(org!.id), {
      action: 'operator.organization.created',
      resourceType: 'organization',
      resourceId: org!.id,
      details: { name: input.name, entitled: input.entitled, max_devices: input.maxDevices, max_device_seconds: input.maxDeviceSeconds, ...origin },
    });
    return escalationSigningSecret === null ? { org_id: org!.id } : { org_id: org!.id, escalation_signing_secret: escalationSigningSecret };
  });
}

/**
 * Replaces the organization's escalation signing secret and returns the new one, shown
 * this once. Deliveries signed from the next attempt on use it; an attempt already on
 * the wire keeps the old one. Refused for an organization without an escalation URL:
 * nothing would be signed with it.
 */
export async function rotateEscalationSigningSecret(
  db: Db,
  orgId: string,
  origin: AdminOrigin = CLI,
): Promise<RotatedEscalationSecret> {
  return db.transaction(async (tx) => {
    await requireOrganization(tx, orgId);
    const secret = generateWebhookSecret();
    const [rotated] = await tx
      .update(organizations)
      .set({ escalationSigningSecret: secret })
      .where(and(eq(organizations.id, orgId), isNotNull(organizations.escalationUrl)))
      .returning({ id: organizations.id });
    if (rotated === undefined) throw new ApiError('no_escalation_url');
    await recordAudit(tx, systemActor(orgId), {
      action: 'operator.organization.escalation_secret_rotated',
      resourceType: 'organization',
      resourceId: orgId,
      details: { ...origin },
    });
    return { org_id: orgId, escalation_signing_secret: secret };
  });
}

/** An operator's change of an organization's settings: a field left out stays as it is, null clears it. */
export interface OrganizationSettings {
  maxDevices?: number | null;
  maxDeviceSeconds?: number | null;
  escalationUrl?: string | null;
}

/**
 * Changes an organization's quotas and escalation URL (`org:update`, the console), audited
 * as `operator.organization.updated` with the fields changed (never the URL itself, which
 * may carry the destination's own token). A new escalation URL is checked as on create.
 * Giving an organization its first escalation URL makes its signing secret, returned this
 * once; removing the URL drops the secret (nothing is signed any more); a changed URL
 * keeps it. Quotas apply from the next create or wake.
 */
export async function updateOrganizationSettings(
  db: Db,
  orgId: string,
  settings: OrganizationSettings,
  { allowPrivateDestinations, origin = CLI }: { allowPrivateDestinations: boolean; origin?: AdminOrigin },
): Promise<UpdatedOrganization> {
  if (settings.escalationUrl != null) await checkEscalationUrl(settings.escalationUrl, allowPrivateDestinations);
  return db.transaction(async (tx) => {
    await requireOrganization(tx, orgId);
    const [current] = await tx.select().from(organizations).where(eq(organizations.id, orgId)).for('update');
    const urlChanged = settings.escalationUrl !== undefined && settings.escalationUrl !== current!.escalationUrl;
    const newSecret = urlChanged && current!.escalationUrl === null ? generateWebhookSecret() : null;
    await tx
      .update(organizations)
      .set({
        ...(settings.maxDevices === undefined ? {} : { maxDevices: settings.maxDevices }),
        ...(settings.maxDeviceSeconds === undefined ? {} : { maxDeviceSeconds: settings.maxDeviceSeconds }),
        ...(urlChanged ? { escalationUrl: settings.escalationUrl, escalationSigningSecret: settings.escalationUrl === null ? null : (newSecret ?? current!.escalationSigningSecret) } : {}),
      })
      .where(eq(organizations.id, orgId));
    await recordAudit(tx, systemActor(orgId), {
      action: 'operator.organization.updated',
      resourceType: 'organization',
      resourceId: orgId,
      details: {
        ...(settings.maxDevices === undefined ? {} : { max_devices: settings.maxDevices }),
        ...(settings.maxDeviceSeconds === undefined ? {} : { max_device_seconds: settings.maxDeviceSeconds }),
        ...(urlChanged ? { escalation_url: settings.escalationUrl === null ? 'removed' : 'set' } : {}),
        ...origin,
      },
    });
    return newSecret === null ? { org_id: orgId } : { org_id: orgId, escalation_signing_secret: newSecret };
  });
}

export async function createSpace(db: Db, orgId: string, name: string, origin: AdminOrigin = CLI): Promise<CreatedSpace> {
  return db.transaction(async (tx) => {
    await requireOrganization(tx, orgId);
    const [space] = await tx.insert(spaces).values({ orgId, name }).returning({ id: spaces.id });
    await recordAudit(tx, systemActor(orgId), { action: 'operator.space.created', resourceType: 'space', resourceId: space!.id, spaceId: space!.id, details: { name, ...origin } });
    return { space_id: space!.id };
  });
}

export interface NewKey {
  orgId: string;
  scopes: string[];
  spaceIds: string[];
  env: KeyEnv;
}

export async function createApiKey(db: Db, input: NewKey, origin: AdminOrigin = CLI): Promise<CreatedApiKey> {
  const { scopes } = input;
  // The published list, never the input (CONTRACT.md): a newcomer who guessed a name sees the real ones.
  if (!scopes.every(isScope)) throw new ApiError('invalid_request', { param: 'scopes', message: `Every scope must be one of the published scopes: ${publishedScopes.join(', ')}.` });
  return db.transaction(async (tx) => {
    await requireOrganization(tx, input.orgId);
    for (const spaceId of input.spaceIds) {
      const [space] = isUuid(spaceId) ? await tx.select({ id: spaces.id }).from(spaces).where(and(eq(spaces.id, spaceId), eq(spaces.orgId, input.orgId))) : [];
      if (space === undefined) throw new ApiError('invalid_request', { param: 'space_ids', message: 'Every Space must be a Space of the organization.' });
    }
    const keyId = generateKeyId();
    const secret = generateSecret();
    await tx.insert(apiKeys).values({
      keyId,
      orgId: input.orgId,
      env: input.env,
      secretHash: hashSecret(secret),
      scopes: input.scopes,
      spaceIds: input.spaceIds,
    });
    await recordAudit(tx, systemActor(input.orgId), {
      action: 'operator.api_key.created',
      resourceType: 'api_key',
      resourceId: keyId,
      details: { env: input.env, scopes: input.scopes, space_ids: input.spaceIds, ...origin },
    });
    return { key: formatApiKey(input.env, keyId, secret), key_id: keyId, scopes, space_ids: input.spaceIds };
  });
}

/**
 * Revokes a key and what it opened, on every instance sharing the database, in one
 * transaction: the sessions it minted are revoked (their sockets close), the MCP clients
 * approved with it lose their grants, and its event streams hear the notification and end. `publicUrl` builds the revoked sessions' events.
 */
export async function revokeApiKey(db: Db, keyId: string, { publicUrl, origin = CLI }: { publicUrl: string; origin?: AdminOrigin }): Promise<RevokedApiKey> {
  return db.transaction(async (tx) => {
    const [key] = await tx
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.keyId, keyId), isNull(apiKeys.revokedAt)))
      .returning({ orgId: apiKeys.orgId });
    if (key === undefined) throw new ApiError('api_key_not_found');
    await recordAudit(tx, systemActor(key.orgId), { action: 'operator.api_key.revoked', resourceType: 'api_key', resourceId: keyId, details: { ...origin } });
    await revokeSessionsOfKey(tx, publicUrl, keyId);
    await revokeGrantsOfKey(tx, keyId);
    await notifyKeyRevoked(tx, keyId);
    return { revoked: true as const };
  });
}

async function requireOrganization(db: DbOrTx, orgId: string): Promise<void> {
  const [org] = isUuid(orgId) ? await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, orgId)) : [];
  if (org === undefined) throw new ApiError('organization_not_found');
}
