const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Delays after the 1st, 2nd, ... failed attempt (CONTRACT.md): about 10 s, 30 s, 2 min,
 * 10 min, 30 min, 1 h, and the last entry repeats, so hourly from then on.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  10 * SECOND,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  HOUR,
];

/** An event whose first attempt is older than this is given up. */
export const DEFAULT_GIVE_UP_AFTER_MS = 24 * HOUR;

/**
 * ±20 %: enough to spread a burst of retries (say, after a receiver outage) over minutes
 * instead of a thundering herd, small enough that the published schedule stays "about" true.
 */
export const DEFAULT_JITTER_RATIO = 0.2;

export interface RetryScheduleOptions {
  /** Replaces the default schedule, e.g. `[50, 100]` in tests. The last entry repeats. */
  baseScheduleMs?: readonly number[];
  /** Jitter as a fraction of the delay; 0 gives exact delays. */
  jitterRatio?: number;
  /** A source of uniform numbers in [0, 1); injectable for deterministic tests. */
  random?: () => number;
}

/**
 * Milliseconds to wait before the next attempt, given how many attempts have failed so far
 * (`failedAttempts` = 1 after the first failure).
 */
export function nextAttemptDelayMs(
  failedAttempts: number,
  {
    baseScheduleMs = DEFAULT_RETRY_SCHEDULE_MS,
    jitterRatio = DEFAULT_JITTER_RATIO,
    random = Math.random,
  }: RetryScheduleOptions = {},
): number {
  if (!Number.isSafeInteger(failedAttempts) || failedAttempts < 1) {
    throw new RangeError('failedAttempts must be an integer of at least 1');
  }
  if (baseScheduleMs.length === 0) throw new RangeError('the retry schedule must not be empty');
  const base = baseScheduleMs[Math.min(failedAttempts, baseScheduleMs.length) - 1]!;
  const factor = 1 + jitterRatio * (2 * random() - 1);
  return Math.max(0, Math.round(base * factor));
}

/** Whether an event first attempted at `firstAttemptAt` has run out of retries. */
export function shouldGiveUp(
  firstAttemptAt: Date,
  now: Date,
  giveUpAfterMs = DEFAULT_GIVE_UP_AFTER_MS,
): boolean {
  return now.getTime() - firstAttemptAt.getTime() >= giveUpAfterMs;
}
