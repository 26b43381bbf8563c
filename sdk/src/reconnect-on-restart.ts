// When and how a WebSocket of the service is opened again. The package is published on its
// own, so this is a copy of the service repository's shared/reconnect-on-restart.ts, which
// the console follows; sdk/test/reconnect-on-restart.test.ts checks that the two agree.

/** The close code of a socket the service asks its client to open again (1012, "Service Restart"). */
export const SERVICE_RESTART_CLOSE_CODE = 1012;

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;
/** Attempts in a row that do not reach a working socket before giving up (about 48 s). */
export const RECONNECT_MAX_ATTEMPTS = 12;

/** Whether a socket closed this way should be opened again. */
export function asksToReconnect(closeCode: number): boolean {
  return closeCode === SERVICE_RESTART_CLOSE_CODE;
}

/**
 * The wait before reconnection attempt `attempt` (0 for the first): 250 ms doubling to
 * 5 s, half of it random; null once the attempts are used up.
 */
export function reconnectDelayMs(attempt: number, random: number = Math.random()): number | null {
  if (attempt >= RECONNECT_MAX_ATTEMPTS) return null;
  const base = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** attempt);
  return Math.round(base / 2 + random * (base / 2));
}
