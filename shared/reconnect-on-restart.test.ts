import { describe, expect, it } from 'vitest';
import { asksToReconnect, reconnectDelayMs, RECONNECT_MAX_ATTEMPTS } from './reconnect-on-restart';

describe('reconnecting after a service restart', () => {
  it('is asked for by close code 1012 only', () => {
    expect(asksToReconnect(1012)).toBe(true);
    for (const code of [1000, 1001, 1006, 1008, 1011, 4409, 4410, 4001]) expect(asksToReconnect(code)).toBe(false);
  });

  it('waits 250 ms doubling to 5 s, half of it random, and gives up after the last attempt', () => {
    const longest = Array.from({ length: RECONNECT_MAX_ATTEMPTS }, (_, attempt) => reconnectDelayMs(attempt, 1));
    expect(longest).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000, 5000, 5000, 5000, 5000]);
    expect(reconnectDelayMs(0, 0)).toBe(125);
    expect(reconnectDelayMs(6, 0)).toBe(2500);
    expect(reconnectDelayMs(RECONNECT_MAX_ATTEMPTS, 0.5)).toBeNull();
  });
});
