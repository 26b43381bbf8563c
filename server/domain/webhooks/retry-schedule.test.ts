import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE_MS, nextAttemptDelayMs, shouldGiveUp } from './retry-schedule';

const exact = { jitterRatio: 0 };

describe('nextAttemptDelayMs', () => {
  it('follows 10 s, 30 s, 2 min, 10 min, 30 min, 1 h, then hourly', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 20].map((n) => nextAttemptDelayMs(n, exact));
    expect(delays).toEqual([10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 3_600_000, 3_600_000]);
    expect(DEFAULT_RETRY_SCHEDULE_MS).toHaveLength(6);
  });

  it('jitters by at most 20 % either way', () => {
    expect(nextAttemptDelayMs(1, { random: () => 0 })).toBe(8_000);
    expect(nextAttemptDelayMs(1, { random: () => 0.5 })).toBe(10_000);
    expect(nextAttemptDelayMs(1, { random: () => 0.999999 })).toBe(12_000);
    for (let i = 0; i < 200; i += 1) {
      const delay = nextAttemptDelayMs(3);
      expect(delay).toBeGreaterThanOrEqual(96_000);
      expect(delay).toBeLessThanOrEqual(144_000);
    }
  });

  it('accepts a configured schedule whose last entry repeats', () => {
    const baseScheduleMs = [50, 100];
    expect([1, 2, 3, 9].map((n) => nextAttemptDelayMs(n, { baseScheduleMs, jitterRatio: 0 }))).toEqual([50, 100, 100, 100]);
  });

  it('refuses nonsense input', () => {
    expect(() => nextAttemptDelayMs(0)).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1.5)).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1, { baseScheduleMs: [] })).toThrow(RangeError);
  });
});

describe('shouldGiveUp', () => {
  const first = new Date('2026-11-22T10:00:00.000Z');

  it('gives up 24 hours after the first attempt', () => {
    expect(shouldGiveUp(first, new Date('2026-11-23T09:59:59.999Z'))).toBe(false);
    expect(shouldGiveUp(first, new Date('2026-11-23T10:00:00.000Z'))).toBe(true);
  });

  it('accepts a configured limit', () => {
    expect(shouldGiveUp(first, new Date(first.getTime() + 500), 1_000)).toBe(false);
    expect(shouldGiveUp(first, new Date(first.getTime() + 1_000), 1_000)).toBe(true);
  });
});
