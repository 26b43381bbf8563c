import { and, count, desc, eq, ilike, inArray, ne, or, type SQL } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, organizations, spaces } from '../../../db/schema';
import { isUuid } from '../ids';
import { iso } from '../time';
import type { OrganizationPage, OrganizationSearch } from './operator-view-schemas';

/**
 * One page of the preview's organizations, newest first: those whose name contains the
 * search (case-insensitive, `%` and `_` taken literally) or whose id it is. Offset paging
 * with the total, so the console can show numbered pages: operators' organizations
 * number in the thousands, where counting and skipping a page's offset is cheap (the
 * `organizations_page_idx` index serves the unfiltered order); each row carries its
 * Space and live-device counts, read for the page's organizations only.
 */
export async function searchOrganizations(db: Db, search: OrganizationSearch): Promise<OrganizationPage> {
  const text = search.query.trim();
  const conditions: (SQL | undefined)[] =
    text === '' ? [] : [or(ilike(organizations.name, `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`), isUuid(text.toLowerCase()) ? eq(organizations.id, text.toLowerCase()) : undefined)];
  const where = and(...conditions);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(organizations)
      .where(where)
      .orderBy(desc(organizations.createdAt), desc(organizations.id))
      .limit(search.page_size)
      .offset((search.page - 1) * search.page_size),
    db.select({ n: count() }).from(organizations).where(where),
  ]);
  const ids = rows.map((row) => row.id);
  const [spaceCounts, deviceCounts] =
    ids.length === 0
      ? [[], []]
      : await Promise.all([
          db.select({ orgId: spaces.orgId, n: count() }).from(spaces).where(inArray(spaces.orgId, ids)).groupBy(spaces.orgId),
          db
            .select({ orgId: devices.orgId, n: count() })
            .from(devices)
            .where(and(inArray(devices.orgId, ids), ne(devices.status, 'terminated')))
            .groupBy(devices.orgId),
        ]);
  const countOf = (counts: { orgId: string; n: number }[], orgId: string) => counts.find((entry) => entry.orgId === orgId)?.n ?? 0;
  return {
    data: rows.map((row) => ({
      id: row.id,
      name: row.name,
      entitled: row.entitled,
      escalation_url: row.escalationUrl,
      created_at: iso(row.createdAt),
      spaces: countOf(spaceCounts, row.id),
      live_devices: countOf(deviceCounts, row.id),
    })),
    total: total?.n ?? 0,
    page: search.page,
    page_size: search.page_size,
  };
}

