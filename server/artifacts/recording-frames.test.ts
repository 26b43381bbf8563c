import { execFile } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameColors, isBlue, isRed } from '../../test/support/video-probe';
import { createLogger } from '../core/log';
import { readFrameSpool } from './frame-spool';
import { RecordingFrames } from './recording-frames';

const run = promisify(execFile);
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
  for (const colour of ['red', 'blue']) {
    const file = path.join(folder, `${colour}.jpg`);
    await run('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `color=c=${colour}:s=320x200`, '-frames:v', '1', file]);
    if (colour === 'red') red = await readFile(file);
    else blue = await readFile(file);
  }
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
    const { frames, spoolFile, pidFile, file } = framesIn('went-live', 700);
    await sleep(400);
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
    expect(colours.length).toBeGreaterThanOrEqual(18);
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
