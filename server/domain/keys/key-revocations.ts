import { and, eq, isNull, sql as drizzleSql } from 'drizzle-orm';
import type postgres from 'postgres';
import type { Db, Tx } from '../../../db/client';
import { apiKeys } from '../../../db/schema';

/** NOTIFY channel carrying the key id of an API key that was revoked. */
export const KEY_REVOKED_CHANNEL = 'operator_api_key_revoked';

/** Queues the notification; PostgreSQL delivers it to every instance when the caller's transaction commits. */
export async function notifyKeyRevoked(tx: Tx, keyId: string): Promise<void> {
  await tx.execute(drizzleSql`select pg_notify(${KEY_REVOKED_CHANNEL}, ${keyId})`);
}

/**
 * This process's one LISTEN on key revocations, for what a key opened that outlives a
 * request: an event stream ends as soon as the key that opened it is revoked, on every
 * instance. Requests hear of it too: the authenticator drops the key from its 500 ms cache
 * (onAnyRevoked), so a revoked key is refused at once rather than within 500 ms.
 * Live-view sockets need nothing of it: a key's revocation revokes the sessions it minted, whose own
 * notifications close their sockets.)
 */
export class KeyRevocations {
  readonly #db: Db;
  readonly #onError: (error: unknown) => void;
  readonly #watchers = new Map<string, Set<() => void>>();
  readonly #anyRevokedListeners: Array<(keyId: string) => void> = [];
  #unlisten: (() => Promise<void>) | null = null;

  private constructor(db: Db, onError: (error: unknown) => void) {
    this.#db = db;
    this.#onError = onError;
  }

  static async start(sql: postgres.Sql, db: Db, onError: (error: unknown) => void): Promise<KeyRevocations> {
    const revocations = new KeyRevocations(db, onError);
    let connected = false;
    const listening = await sql.listen(
      KEY_REVOKED_CHANNEL,
      (keyId) => revocations.#revoked(keyId),
      // Called again after every reconnect: revocations notified meanwhile were lost, so
      // every watched key is read again.
      () => {
        if (connected) for (const keyId of revocations.#watchers.keys()) revocations.#check(keyId);
        connected = true;
      },
    );
    revocations.#unlisten = listening.unlisten;
    return revocations;
  }

  /**
   * Calls `onRevoked` once, when `keyId` is revoked, or soon if it already is: it
   * subscribes first and then reads the key, so a revocation committed after the caller
   * authenticated (perhaps from the authenticator's cache) and before this call is not
   * missed. Returns the function that stops watching; `onRevoked` never runs inside this
   * call.
   */
  watch(keyId: string, onRevoked: () => void): () => void {
    let watchers = this.#watchers.get(keyId);
    if (watchers === undefined) this.#watchers.set(keyId, (watchers = new Set()));
    const watcher = () => {
      stop();
      onRevoked();
    };
    const stop = () => {
      watchers.delete(watcher);
      if (watchers.size === 0 && this.#watchers.get(keyId) === watchers) this.#watchers.delete(keyId);
    };
    watchers.add(watcher);
    this.#check(keyId);
    return stop;
  }

  async close(): Promise<void> {
    await this.#unlisten?.().catch(this.#onError);
    this.#watchers.clear();
  }

  #check(keyId: string): void {
    this.#db
      .select({ keyId: apiKeys.keyId })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyId, keyId), isNull(apiKeys.revokedAt)))
      .then((live) => {
        if (live.length === 0) this.#revoked(keyId);
      }, this.#onError);
  }

  /** Calls `listener` with the id of every key revoked from now on (notified revocations only). */
  onAnyRevoked(listener: (keyId: string) => void): void {
    this.#anyRevokedListeners.push(listener);
  }

  #revoked(keyId: string): void {
    for (const listener of this.#anyRevokedListeners) listener(keyId);
    for (const watcher of [...(this.#watchers.get(keyId) ?? [])]) watcher();
  }
}
