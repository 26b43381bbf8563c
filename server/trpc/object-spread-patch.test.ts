import { initTRPC } from '@trpc/server';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

// patches/@trpc+server+*.patch replaces the per-key copy in tRPC's object-spread helper,
// which every middleware step of every procedure call runs, with Object.assign. These
// tests hold it to what native spread does, and to staying on the fast path.
const t = initTRPC.context<Record<string, unknown>>().create();

/** A procedure whose middleware merges `added` into the context; the call returns the merged context. */
function mergingProcedure(added: Record<string, unknown>) {
  let seen: Record<string, unknown> = {};
  const procedure = t.procedure
    .use(({ next }) => next({ ctx: added }))
    .input(z.strictObject({}))
    .output(z.boolean())
    .query(({ ctx }) => {
      seen = ctx;
      return true;
    });
  return async (start: Record<string, unknown>) => {
    await procedure({ ctx: start, getRawInput: async () => ({}), path: 'probe', type: 'query', signal: undefined, batchIndex: 0 });
    return seen;
  };
}

describe('tRPC object spread (patched)', () => {
  it('merges a middleware context exactly as native spread: order, symbols, getters read once, later keys win', async () => {
    const marker = Symbol('marker');
    let reads = 0;
    const start = { a: 1, b: 2, [marker]: 'symbol value' };
    const added = Object.defineProperty({ b: 3, c: 4 }, 'computed', { get: () => ++reads, enumerable: true });
    Object.defineProperty(added, 'hidden', { value: 'not enumerable', enumerable: false });

    const merged = await mergingProcedure(added)(start);
    const native = { ...start, ...{ b: 3, c: 4, computed: 1 } };
    expect(Reflect.ownKeys(merged)).toEqual(Reflect.ownKeys(native));
    expect(merged).toEqual(native);
    expect(Reflect.get(merged, marker)).toBe('symbol value');
    expect(Object.getOwnPropertyDescriptor(merged, 'computed')).toMatchObject({ value: 1, writable: true });
    expect(reads).toBe(1);
  });

  it('keeps an own "__proto__" key as a property, never as the prototype', async () => {
    const added = JSON.parse('{"__proto__": {"polluted": true}, "d": 5}') as Record<string, unknown>;
    const merged = await mergingProcedure(added)({ a: 1 });
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect(merged.polluted).toBeUndefined();
    expect(merged.d).toBe(5);
  });

  it('calls a procedure without copying property descriptors (the slow path of the unpatched helper)', async () => {
    const call = mergingProcedure({ b: 2 });
    await call({ a: 1 }); // zod prepares its parsers on first use
    const descriptors = vi.spyOn(Object, 'getOwnPropertyDescriptors');
    await call({ a: 1 });
    // Counted before expect(), which copies descriptors of its own.
    const copies = descriptors.mock.calls.length;
    descriptors.mockRestore();
    expect(copies).toBe(0);
  });
});
