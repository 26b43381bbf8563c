import { ApiError } from '../../core/errors';
import { secretMatches } from '../secret-hash';
import { parseApiKey } from './api-key-format';
import type { KeyRecord, LoadKeyRecord } from './key-record';
import type { Principal } from './principal';
import { isScope } from './scopes';

// A verified key is trusted from memory for this long. It bounds how late a revocation
// is seen by every instance (the contract asks for under 1 s) while sparing the
// database one query per request.
const CACHE_TTL_MS = 500;
// last_used_at is informational; writing it more than once a minute per key is waste.
const LAST_USED_WRITE_INTERVAL_MS = 60_000;
// Bounded so a flood of distinct valid keys cannot grow memory without limit.
const CACHE_MAX_ENTRIES = 10_000;

interface CacheEntry {
  principal: Principal;
  expiresAt: number;
}

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /**
   * Lookups under way, by presented key. When a busy key's entry expires, every request
   * that arrives before the database answers waits for the same lookup, instead of each
   * sending its own query (at 50 concurrent requests that was 50 queries per expiry).
   */
  private readonly lookups = new Map<string, Promise<Principal>>();
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(
    private readonly loadKeyRecord: LoadKeyRecord,
    private readonly recordLastUsed: (keyId: string, at: Date) => void,
  ) {}

  /** Drops a revoked key from the cache, so its next request is checked against the database. */
  forgetKey(keyId: string): void {
    for (const [key, entry] of this.cache) if (entry.principal.keyId === keyId) this.cache.delete(key);
  }

  /** Resolves the bearer an API key was presented as to a principal, or throws 401 invalid_api_key. */
  async authenticate(key: string | null): Promise<Principal> {
    if (key === null) throw new ApiError('invalid_api_key');
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.expiresAt > Date.now()) return cached.principal;

    const pending = this.lookups.get(key);
    if (pending !== undefined) return pending;
    const lookup = this.verify(key).finally(() => this.lookups.delete(key));
    this.lookups.set(key, lookup);
    return lookup;
  }

  private async verify(key: string): Promise<Principal> {
    const parsed = parseApiKey(key);
    if (parsed === null) throw new ApiError('invalid_api_key');
    const record = await this.loadKeyRecord(parsed.keyId);
    if (record === null || record.revokedAt !== null || record.env !== parsed.env || !secretMatches(parsed.secret, record.secretHash)) {
      this.cache.delete(key);
      throw new ApiError('invalid_api_key');
    }
    const now = Date.now();
    const principal = toPrincipal(record);
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
    this.cache.set(key, { principal, expiresAt: now + CACHE_TTL_MS });
    this.touchLastUsed(record.keyId, now);
    return principal;
  }

  private touchLastUsed(keyId: string, now: number): void {
    const last = this.lastUsedWrites.get(keyId) ?? 0;
    if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(keyId, now);
    this.recordLastUsed(keyId, new Date(now));
  }
}

function toPrincipal(record: KeyRecord): Principal {
  return {
    keyId: record.keyId,
    orgId: record.orgId,
    scopes: new Set(record.scopes.filter(isScope)),
    spaceIds: record.spaceIds,
    entitled: record.entitled,
  };
}
