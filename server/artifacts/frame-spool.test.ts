import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameSpool, readFrameSpool } from './frame-spool';

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'frame-spool-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Stand-ins for JPEGs: the spool keeps bytes, it does not read them.
const frame = (name: string) => Buffer.from(`frame ${name} `.repeat(200));

describe('FrameSpool', () => {
  it('keeps each frame at the tick it was shown from, and the video as long as the wall clock ran', async () => {
    const file = path.join(folder, 'changes.frames');
    const startedAt = Date.now();
    const spool = new FrameSpool(file, 10, frame('a'), startedAt);
    await sleep(350);
    spool.push(frame('b'));
    await sleep(350);
    const ticks = await spool.close();
    const elapsedTicks = Math.floor(((Date.now() - startedAt) * 10) / 1000);
    expect(Math.abs(ticks - elapsedTicks)).toBeLessThanOrEqual(2);

    const spooled = await readFrameSpool(file);
    expect(spooled!.fps).toBe(10);
    expect(spooled!.frames).toHaveLength(ticks);
    const names = spooled!.frames.map((jpeg) => jpeg.toString().slice(6, 7));
    // a for the first 350 ms, then b: about three and a half ticks each, in order.
    const firstB = names.indexOf('b');
    expect(firstB).toBeGreaterThanOrEqual(2);
    expect(firstB).toBeLessThanOrEqual(6);
    expect(names.slice(0, firstB).every((name) => name === 'a')).toBe(true);
    expect(names.slice(firstB).every((name) => name === 'b')).toBe(true);
  });

  it('writes a still page once, however long it shows', async () => {
    const file = path.join(folder, 'still.frames');
    const still = frame('s');
    const spool = new FrameSpool(file, 10, still);
    await sleep(1_500);
    const ticks = await spool.close();
    expect(ticks).toBeGreaterThanOrEqual(14);
    // The header, one frame, and a few marks of 8 bytes.
    expect((await stat(file)).size).toBeLessThan(still.length + 200);
    expect(spool.bytes).toBe((await stat(file)).size);
    const spooled = await readFrameSpool(file);
    expect(spooled!.frames).toHaveLength(ticks);
    expect(spooled!.frames.every((jpeg) => jpeg.equals(still))).toBe(true);
  });

  it('reads what a process killed mid-recording left: all but its last second, and not a record cut short', async () => {
    const file = path.join(folder, 'crashed.frames');
    const spool = new FrameSpool(file, 10, frame('x'));
    await sleep(1_300);
    spool.push(frame('y'));
    await sleep(250);
    const ticks = await spool.close();
    // The file as a crash before the end's mark, in the middle of the last frame, leaves it.
    const whole = await readFile(file);
    const cut = whole.lastIndexOf(frame('y')) + 100;
    await truncate(file, cut);
    const spooled = await readFrameSpool(file);
    // The still second's mark survives; the frame cut short does not.
    expect(spooled!.frames.length).toBeGreaterThanOrEqual(10);
    expect(spooled!.frames.length).toBeLessThan(ticks);
    expect(spooled!.frames.every((jpeg) => jpeg.equals(frame('x')))).toBe(true);
  });

  it('reads a file that is not a spool as null', async () => {
    const file = path.join(folder, 'not-a-spool.frames');
    await writeFile(file, 'an MP4, say');
    expect(await readFrameSpool(file)).toBeNull();
  });

  it('fails its close when its file cannot be written', async () => {
    const spool = new FrameSpool(path.join(folder, 'missing-folder', 'x.frames'), 10, frame('z'));
    await expect(spool.close()).rejects.toThrow(/ENOENT/);
  });
});
