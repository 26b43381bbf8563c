import { expect, it } from 'vitest';
import { NulFrameReader, nulFrame } from './nul-frames';

it('splits NUL-terminated messages across chunk boundaries, multi-byte characters included', () => {
  const reader = new NulFrameReader();
  const wire = Buffer.from(nulFrame('{"id":1}') + nulFrame('{"text":"héllo ✓"}') + nulFrame('{"id":3}'));
  const messages: string[] = [];
  // One byte at a time splits every message and the two-byte and three-byte characters.
  for (let i = 0; i < wire.length; i += 1) messages.push(...reader.push(wire.subarray(i, i + 1)));
  expect(messages).toEqual(['{"id":1}', '{"text":"héllo ✓"}', '{"id":3}']);
  expect(reader.push(Buffer.from(nulFrame('a') + nulFrame('b') + 'c'))).toEqual(['a', 'b']);
  expect(reader.push(Buffer.from('d\0'))).toEqual(['cd']);
});
