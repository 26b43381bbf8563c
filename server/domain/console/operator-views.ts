import { asc, desc, eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { apiKeys, escalations, organizations, spaces } from '../../../db/schema';
import { toEscalationResource } from '../escalations/escalation-resource';
import { iso, isoOrNull } from '../time';
import type { ApiKeyView, OrganizationView, PendingEscalation } from './operator-view-schemas';

// What the console shows operators: every organization of the preview, with its Spaces
// and keys, and the escalations waiting for a person. Read-only; changes go through
// operator-admin.ts and the escalation domain like the CLI's and the API's.

/** Never more than this many escalations on the queue page: the oldest wait longest. */
const PENDING_LIMIT = 100;

export async function listOrganizations(db: Db): Promise<OrganizationView[]> {
  const [orgRows, spaceRows] = await Promise.all([
    db.select().from(organizations).orderBy(desc(organizations.createdAt)),
    db.select({ id: spaces.id, orgId: spaces.orgId, name: spaces.name }).from(spaces).orderBy(asc(spaces.name)),
  ]);
  return orgRows.map((org) => ({
    id: org.id,
    name: org.name,
    entitled: org.entitled,
    max_devices: org.maxDevices,
    max_device_seconds: org.maxDeviceSeconds,
    escalation_url: org.escalationUrl,
    created_at: iso(org.createdAt),
    spaces: spaceRows.filter((space) => space.orgId === org.id).map(({ id, name }) => ({ id, name })),
  }));
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

/** Pending escalations of every organization, oldest first, with the organization's name. */
export async function pendingEscalations(db: Db): Promise<PendingEscalation[]> {
  const rows = await db
    .select({ escalation: escalations, organization: organizations.name })
    .from(escalations)
    .innerJoin(organizations, eq(organizations.id, escalations.orgId))
    .where(eq(escalations.status, 'pending'))
    .orderBy(asc(escalations.createdAt))
    .limit(PENDING_LIMIT);
  return rows.map((row) => ({ ...toEscalationResource(row.escalation), organization: row.organization }));
}
