import { and, eq, isNull, sql as drizzleSql } from 'drizzle-orm';
import type { Db, Tx } from '../../../db/client';
import { apiKeys } from '../../../db/schema';
import type { Notifications } from '../channels/notifications';

/** NOTIFY channel carrying the key id of an API key that was revoked. */
export const KEY_REVOKED_CHANNEL = 'operator_api_key_revoked';

/** Queues the notification; PostgreSQL delivers it to every instance when the caller's transaction commits. */
export async function notifyKeyRevoked(tx: Tx, keyId: string): Promise<void> {
  await tx.execute(drizzleSql`select pg_notify(${KEY_REVOKED_CHANNEL}, ${keyId})`);
}

/**
 * Key revocations as this process hears of them, for what a key opened that outlives a
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
  readonly #unsubscribe: () => void;

  constructor(notifications: Notifications, db: Db, onError: (error: unknown) => void) {
    this.#db = db;
    this.#onError = onError;
    this.#unsubscribe = notifications.subscribe(KEY_REVOKED_CHANNEL, {
      onNotify: (keyId) => this.#revoked(keyId),
      // Revocations notified while the connection was down were lost: every watched key is read again.
      onReconnect: () => {
        for (const keyId of this.#watchers.keys()) this.#check(keyId);
      },
    });
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

  close(): void {
    this.#unsubscribe();
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
