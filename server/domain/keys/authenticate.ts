import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { apiKeys, organizations } from '../../../db/schema';
import { ApiError } from '../../errors';
import { parseApiKey, secretMatches } from './api-key-format';
import type { Principal } from './principal';
import { isScope } from './scopes';

// A verified key is trusted from memory for this long. It bounds how late a revocation
// is seen by every instance (the contract asks for under 1 s) while sparing the
// database one query per request.
const CACHE_TTL_MS = 500;
// last_used_at is informational; writing it more than once a minute per key is waste.
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

interface CacheEntry {
  principal: Principal;
  expiresAt: number;
}

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(private readonly db: Db) {}

  /** Resolves `Authorization: Bearer <key>` to a principal or throws 401 invalid_api_key. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    const key = bearerToken(authorization);
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.expiresAt > now) return cached.principal;

    const parsed = parseApiKey(key);
    if (parsed === null) throw new ApiError('invalid_api_key');
    const [row] = await this.db
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
      .where(eq(apiKeys.keyId, parsed.keyId))
      .limit(1);
    if (row === undefined || row.revokedAt !== null || row.env !== parsed.env || !secretMatches(parsed.secret, row.secretHash)) {
      this.cache.delete(key);
      throw new ApiError('invalid_api_key');
    }
    const principal: Principal = {
      keyId: row.keyId,
      orgId: row.orgId,
      scopes: new Set(row.scopes.filter(isScope)),
      spaceIds: row.spaceIds,
      entitled: row.entitled,
    };
    this.remember(key, { principal, expiresAt: now + CACHE_TTL_MS });
    this.touchLastUsed(row.keyId, now);
    return principal;
  }

  private remember(key: string, entry: CacheEntry): void {
    // Bounded so a flood of distinct valid keys cannot grow memory without limit.
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(key, entry);
  }

  private touchLastUsed(keyId: string, now: number): void {
    const last = this.lastUsedWrites.get(keyId) ?? 0;
    if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(keyId, now);
    void this.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(now) })
      .where(eq(apiKeys.keyId, keyId))
      .catch(() => undefined);
  }
}

function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined) throw new ApiError('invalid_api_key');
  const match = /^Bearer ([^\s]+)$/.exec(authorization.trim());
  if (match === null) throw new ApiError('invalid_api_key');
  return match[1]!;
}
