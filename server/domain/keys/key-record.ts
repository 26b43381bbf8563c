import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { apiKeys, organizations } from '../../../db/schema';

/** What authentication needs to know of a key: its row and its organization's entitlement. */
export interface KeyRecord {
  keyId: string;
  env: string;
  orgId: string;
  secretHash: string;
  scopes: string[];
  spaceIds: string[];
  revokedAt: Date | null;
  entitled: boolean;
}

export type LoadKeyRecord = (keyId: string) => Promise<KeyRecord | null>;

export function keyRecordLoader(db: Db): LoadKeyRecord {
  return async (keyId) => {
    const [row] = await db
      .select({
        keyId: apiKeys.keyId,
        env: apiKeys.env,
        orgId: apiKeys.orgId,
        secretHash: apiKeys.secretHash,
        scopes: apiKeys.scopes,
        spaceIds: apiKeys.spaceIds,
        revokedAt: apiKeys.revokedAt,
        entitled: organizations.entitled,
      })
      .from(apiKeys)
      .innerJoin(organizations, eq(organizations.id, apiKeys.orgId))
      .where(eq(apiKeys.keyId, keyId))
      .limit(1);
    return row ?? null;
  };
}

/** Records when a key was last used; informational, so a failed write is ignored. */
export function lastUsedRecorder(db: Db): (keyId: string, at: Date) => void {
  return (keyId, at) => {
    void db
      .update(apiKeys)
      .set({ lastUsedAt: at })
      .where(eq(apiKeys.keyId, keyId))
      .catch(() => undefined);
  };
}
