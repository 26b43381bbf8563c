import { and, asc, count, desc, eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { apiKeys, escalations, organizations, spaces } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { toEscalationResource } from '../escalations/escalation-resource';
import { isUuid } from '../ids';
import { iso, isoOrNull } from '../time';
import type { ApiKeyView, OrganizationView, PendingEscalation, WaitingOrganization } from './operator-view-schemas';

// What the console shows operators: an organization of the preview with its Spaces and
// keys, and the escalations waiting for a person. Read-only; changes go through
// operator-admin.ts and the escalation domain like the CLI's and the API's.

/** Never more than this many escalations on the queue page: the oldest wait longest. */
const PENDING_LIMIT = 100;

/** One organization with its Spaces (404 organization_not_found for an unknown or malformed id); never its signing secret. */
export async function getOrganizationView(db: Db, orgId: string): Promise<OrganizationView> {
  const [org] = isUuid(orgId) ? await db.select().from(organizations).where(eq(organizations.id, orgId)) : [];
  if (org === undefined) throw new ApiError('organization_not_found');
  const spaceRows = await db.select({ id: spaces.id, name: spaces.name }).from(spaces).where(eq(spaces.orgId, orgId)).orderBy(asc(spaces.name));
  return {
    id: org.id,
    name: org.name,
    entitled: org.entitled,
    max_devices: org.maxDevices,
    max_device_seconds: org.maxDeviceSeconds,
    escalation_url: org.escalationUrl,
    created_at: iso(org.createdAt),
    spaces: spaceRows,
  };
}

/** An organization's keys, newest first; never a secret or its hash. */
export async function listApiKeys(db: Db, orgId: string): Promise<ApiKeyView[]> {
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.orgId, orgId)).orderBy(desc(apiKeys.createdAt));
  return rows.map((row) => ({
    key_id: row.keyId,
    env: row.env,
    scopes: row.scopes,
    space_ids: row.spaceIds,
    created_at: iso(row.createdAt),
    last_used_at: isoOrNull(row.lastUsedAt),
    revoked_at: isoOrNull(row.revokedAt),
  }));
}

/**
 * Pending escalations, oldest first, with the organization's name: of every organization,
 * or of one (`orgId`; a malformed id matches none).
 */
export async function pendingEscalations(db: Db, filter: { orgId?: string } = {}): Promise<PendingEscalation[]> {
  if (filter.orgId !== undefined && !isUuid(filter.orgId)) return [];
  const rows = await db
    .select({ escalation: escalations, organization: organizations.name })
    .from(escalations)
    .innerJoin(organizations, eq(organizations.id, escalations.orgId))
    .where(and(eq(escalations.status, 'pending'), filter.orgId === undefined ? undefined : eq(escalations.orgId, filter.orgId)))
    .orderBy(asc(escalations.createdAt))
    .limit(PENDING_LIMIT);
  return rows.map((row) => ({ ...toEscalationResource(row.escalation), org_id: row.escalation.orgId, organization: row.organization }));
}

/** The organizations with escalations waiting, with how many, by name: the inbox's filter. */
export async function waitingOrganizations(db: Db): Promise<WaitingOrganization[]> {
  return db
    .select({ id: organizations.id, name: organizations.name, waiting: count() })
    .from(escalations)
    .innerJoin(organizations, eq(organizations.id, escalations.orgId))
    .where(eq(escalations.status, 'pending'))
    .groupBy(organizations.id, organizations.name)
    .orderBy(asc(organizations.name));
}
