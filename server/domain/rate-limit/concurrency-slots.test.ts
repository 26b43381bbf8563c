import { describe, expect, it } from 'vitest';
import { ConcurrencySlots } from './concurrency-slots';

describe('ConcurrencySlots', () => {
  it('gives each owner its own slots up to the limit, and a slot back once however often it is released', () => {
    const slots = new ConcurrencySlots(2);
    const first = slots.claim('key_a');
    const second = slots.claim('key_a');
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(slots.claim('key_a')).toBeNull();
    expect(slots.claim('key_b')).not.toBeNull();

    first!();
    first!();
    expect(slots.claim('key_a')).not.toBeNull();
    expect(slots.claim('key_a')).toBeNull();
  });
});
