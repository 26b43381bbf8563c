import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lavfiJpeg } from '../../test/support/lavfi-jpeg';
import { frameColors, isBlue, isRed } from '../../test/support/video-probe';
import { createLogger } from '../core/log';
import { readFrameSpool } from './frame-spool';
import { RecordingFrames } from './recording-frames';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

let folder: string;
let red: Buffer;
let blue: Buffer;
const log = createLogger('silent');

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'recording-frames-'));
  red = await lavfiJpeg('color=c=red:s=320x200');
  blue = await lavfiJpeg('color=c=blue:s=320x200');
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

function framesIn(name: string, encodeLiveAfterMs: number): { frames: RecordingFrames; file: string; spoolFile: string; pidFile: string } {
  const file = path.join(folder, `${name}.mp4`);
  const files = { file, spoolFile: `${file}.frames`, pidFile: `${file}.pid` };
  return { ...files, frames: new RecordingFrames({ ...files, fps: 10, width: 320, height: 200, encodeLiveAfterMs, log }, red) };
}

describe('RecordingFrames', () => {
  it('keeps the frames of a recording that ends within its deferral in a spool, with no encoder started', async () => {
    const { frames, spoolFile, pidFile, file } = framesIn('deferred', 60_000);
    await sleep(600);
    frames.push(blue);
    await sleep(600);
    expect(await frames.end()).toEqual({ kind: 'spooled' });
    expect(await exists(pidFile)).toBe(false);
    expect(await exists(file)).toBe(false);
    const spooled = await readFrameSpool(spoolFile);
    expect(spooled!.frames.length).toBeGreaterThanOrEqual(11);
    expect(spooled!.frames[0]).toBe(spooled!.frames[1]);
    expect(spooled!.frames[0]!.equals(red)).toBe(true);
    expect(spooled!.frames.at(-1)!.equals(blue)).toBe(true);
  });

  it('starts its encoder once the deferral passes, with the kept frames first, and removes the spool', async () => {
    const { frames, spoolFile, pidFile, file } = framesIn('went-live', 1_500);
    await sleep(300);
    // Still kept: nothing encodes yet.
    expect(await exists(spoolFile)).toBe(true);
    expect(await exists(pidFile)).toBe(false);
    await expect.poll(() => exists(pidFile), { timeout: 10_000, interval: 50 }).toBe(true);
    await expect.poll(() => exists(spoolFile), { timeout: 10_000, interval: 50 }).toBe(false);
    frames.push(blue);
    await sleep(800);
    const ended = await frames.end();
    expect(ended.kind).toBe('encoded');
    if (ended.kind !== 'encoded') return;
    expect(ended.video.ok).toBe(true);
    const colours = await frameColors(file);
    // Red from the first frame, kept before the encoder began; blue at the end, sent to it live.
    expect(colours.slice(0, 6).every(isRed)).toBe(true);
    expect(colours.slice(-5).every(isBlue)).toBe(true);
    // At least the 1.5 s before the encoder and the 0.8 s after, at 10 fps.
    expect(colours.length).toBeGreaterThanOrEqual(23);
  });

  it('encodes as it goes from the first frame when told not to wait', async () => {
    const { frames, spoolFile, pidFile } = framesIn('live', 0);
    await expect.poll(() => exists(pidFile), { timeout: 10_000, interval: 50 }).toBe(true);
    expect(await exists(spoolFile)).toBe(false);
    await sleep(300);
    const ended = await frames.end();
    expect(ended).toMatchObject({ kind: 'encoded', video: { ok: true } });
  });

  it('says its frames were lost when the spool cannot be written', async () => {
    const file = path.join(folder, 'no-such-folder', 'lost.mp4');
    const frames = new RecordingFrames({ file, spoolFile: `${file}.frames`, pidFile: `${file}.pid`, fps: 10, width: 320, height: 200, encodeLiveAfterMs: 60_000, log }, red);
    const ended = await frames.end();
    expect(ended.kind).toBe('failed');
  });
});
