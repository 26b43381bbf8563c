// What a WebSocket client of the service does when the service asks it to come back: the
// close frame that asks (the gateways send it) and the backoff of the reconnection (the
// console's live view follows it). Pure, so the server and the browser bundle share it.
// The SDK is published without this repository around it and keeps a copy of its own
// (sdk/src/reconnect-on-restart.ts), checked against this one by sdk/test/reconnect-on-restart.test.ts.

/**
 * The close frame of a socket whose client should open it again, with the same URL or
 * token, after a short backoff: the instance serving it is stopping (a restart) or is
 * handing the device over to another instance. 1012 is "Service Restart" in the IANA
 * registry of WebSocket close codes; the reason is the CONTRACT.md name.
 */
export const SERVICE_RESTART_CLOSE = { code: 1012, reason: 'service_restart' } as const;

/** First wait before reconnecting; doubled after each failed attempt. */
export const RECONNECT_FIRST_DELAY_MS = 250;
/** Longest wait between two attempts. */
export const RECONNECT_MAX_DELAY_MS = 5_000;
/**
 * Attempts in a row that do not reach a working socket before giving up: about 48 s of
 * trying (250 ms, 0.5, 1, 2, 4 s, then 5 s each), enough for an instance to stop, start
 * and relaunch its browsers.
 */
export const RECONNECT_MAX_ATTEMPTS = 12;

/** Whether a socket closed this way should be opened again. */
export function asksToReconnect(closeCode: number): boolean {
  return closeCode === SERVICE_RESTART_CLOSE.code;
}

/**
 * The wait before reconnection attempt `attempt` (0 for the first), or null once the
 * attempts are used up. Half of it is random (`random` in [0, 1)), so the many clients one
 * restart closed at once do not all come back at the same moment.
 */
export function reconnectDelayMs(attempt: number, random: number = Math.random()): number | null {
  if (attempt >= RECONNECT_MAX_ATTEMPTS) return null;
  const base = Math.min(RECONNECT_MAX_DELAY_MS, RECONNECT_FIRST_DELAY_MS * 2 ** attempt);
  return Math.round(base / 2 + random * (base / 2));
}
