import type postgres from 'postgres';

/** What a subscriber of a NOTIFY channel does with it. */
export interface ChannelSubscriber {
  /** A notification on the channel, with its payload. */
  onNotify(payload: string): void;
  /**
   * The LISTEN connection came back after it was lost (a database outage, a restart):
   * whatever was notified meanwhile is lost, so the subscriber re-reads what it watches.
   */
  onReconnect(): void;
}

/**
 * This process's one LISTEN connection, and the one place that chooses its channels: every
 * channel is listened on at start, before anything that subscribes can run, so no
 * subscriber misses a notification sent after it subscribed.
 *
 * postgres.js keeps one dedicated connection for all of a client's `listen` calls, and
 * after that connection drops it connects again, listens again and calls each channel's
 * `onlisten` once more: that second call is the reconnect every subscriber hears of (one
 * rule for all of them). A subscriber's error is reported and never reaches the others or
 * postgres.js.
 */
export class Notifications {
  readonly #subscribers = new Map<string, Set<ChannelSubscriber>>();
  readonly #unlisten: Array<() => Promise<void>> = [];

  private constructor(private readonly onError: (error: unknown) => void) {}

  static async start(sql: postgres.Sql, channels: readonly string[], onError: (error: unknown) => void): Promise<Notifications> {
    const notifications = new Notifications(onError);
    for (const channel of channels) {
      notifications.#subscribers.set(channel, new Set());
      let listening = false;
      const { unlisten } = await sql.listen(
        channel,
        (payload) => notifications.#tell(channel, (subscriber) => subscriber.onNotify(payload)),
        () => {
          if (listening) notifications.#tell(channel, (subscriber) => subscriber.onReconnect());
          listening = true;
        },
      );
      notifications.#unlisten.push(unlisten);
    }
    return notifications;
  }

  /** Hands `channel`'s notifications to `subscriber` until the returned function is called. */
  subscribe(channel: string, subscriber: ChannelSubscriber): () => void {
    const subscribers = this.#subscribers.get(channel);
    if (subscribers === undefined) throw new Error(`${channel} is not among the channels this process listens on`);
    subscribers.add(subscriber);
    return () => subscribers.delete(subscriber);
  }

  /**
   * Stops listening. Subscribers hear nothing more from here on, even from a connection
   * postgres.js re-established (its `unlisten` misses listeners it re-added itself); the
   * connection ends with the database client.
   */
  async close(): Promise<void> {
    for (const subscribers of this.#subscribers.values()) subscribers.clear();
    await Promise.all(this.#unlisten.map((unlisten) => unlisten().catch(this.onError)));
  }

  #tell(channel: string, call: (subscriber: ChannelSubscriber) => void): void {
    for (const subscriber of [...(this.#subscribers.get(channel) ?? [])]) {
      try {
        call(subscriber);
      } catch (error) {
        this.onError(error);
      }
    }
  }
}
