import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lavfiJpeg } from '../../test/support/lavfi-jpeg';
import { frameColors, isBlue, isRed } from '../../test/support/video-probe';
import { spawnPiped } from '../os/spawner/child-spawner';
import { encodeFrames, FrameEncoder } from './frame-encoder';
import { probeVideo } from './probe-video';


let folder: string;
let frame: Buffer;
let smallFrame: Buffer;
let red: Buffer;
let blue: Buffer;

beforeAll(async () => {
  // The spawner up beforehand, as in a service that recorded before: its start (a Node
  // process, 1 s and more on a loaded host) is not the stall this file is about.
  const warm = await spawnPiped('/bin/true', []);
  warm.stdin.end();
  await warm.exited;
  folder = await mkdtemp(path.join(tmpdir(), 'frame-encoder-'));
  // A busy 1080p picture: about 120 kB of JPEG, as a detailed page's frame is.
  frame = await lavfiJpeg('testsrc2=s=1920x1080', 1);
  smallFrame = await lavfiJpeg('color=c=white:s=640x360');
  red = await lavfiJpeg('color=c=red:s=320x200');
  blue = await lavfiJpeg('color=c=blue:s=320x200');
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('FrameEncoder', () => {
  it('holds at most 8 MiB of frames for an ffmpeg that stopped reading, and catches up once it reads again', async () => {
    const file = path.join(folder, 'stalled.mp4');
    const startedAt = Date.now();
    const encoder = new FrameEncoder({ file, pidFile: `${file}.pid`, fps: 50, width: 640, height: 360 }, frame);
    await expect.poll(() => encoder.pid).toBeDefined();
    expect(await readFile(`${file}.pid`, 'utf8')).toBe(String(encoder.pid));
    // ffmpeg stops reading (a starved or stopped encoder): SIGSTOP, a real stall.
    process.kill(encoder.pid!, 'SIGSTOP');
    try {
      // 2 s at 50 fps is 100 frames, 11 MiB and more than the pipe and the limit hold.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(encoder.pendingBytes).toBeGreaterThan(4 * 1024 * 1024);
      expect(encoder.pendingBytes).toBeLessThanOrEqual(8 * 1024 * 1024 + frame.length);
    } finally {
      // From here the page shows a plain frame: the backlog of busy 1080p frames is what
      // must drain. ffmpeg decoding busy 1080p at 50 fps and more, on a host the full
      // suite keeps busy, could not always outrun the frames still coming due (20 s).
      encoder.push(smallFrame);
      process.kill(encoder.pid!, 'SIGCONT');
    }
    // Reading again, it catches up: what waits drops to about the frame of a tick.
    await expect.poll(() => encoder.pendingBytes, { timeout: 20_000, interval: 50 }).toBeLessThan(4 * frame.length);
    const elapsedMs = Date.now() - startedAt;
    const ended = await encoder.stop();
    expect(ended.ok).toBe(true);
    // The frames held back followed: the video is as long as the wall clock's time.
    const video = await probeVideo(file);
    expect(Math.abs(video!.durationMs - elapsedMs)).toBeLessThan(600);
  });

  it('starts with the frames kept before it, then goes on with the wall clock', async () => {
    const file = path.join(folder, 'backlog.mp4');
    // Two seconds kept red at 10 fps, as a spool hands them over.
    const startedAt = Date.now() - 2_000;
    const encoder = new FrameEncoder({ file, pidFile: `${file}.pid`, fps: 10, width: 320, height: 200 }, blue, { startedAt, frames: Array.from({ length: 20 }, () => red) });
    await encoder.backlogWritten;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const stoppedAt = Date.now();
    const ended = await encoder.stop();
    expect(ended).toMatchObject({ ok: true, width: 320, height: 200 });
    const colours = await frameColors(file);
    // The kept frames first, in order, then the page as it is now: about a second of it.
    expect(colours.slice(0, 20).every(isRed)).toBe(true);
    expect(colours.slice(20).every(isBlue)).toBe(true);
    expect(colours.length - 20).toBeGreaterThanOrEqual(8);
    expect(Math.abs(ended.durationMs - (stoppedAt - startedAt))).toBeLessThan(600);
  });
});

describe('encodeFrames', () => {
  it('encodes kept frames into a video of their length, as fast as ffmpeg takes them', async () => {
    const file = path.join(folder, 'kept.mp4');
    const frames = [...Array.from({ length: 15 }, () => red), ...Array.from({ length: 10 }, () => blue)];
    const startedAt = Date.now();
    const video = await encodeFrames({ file, pidFile: `${file}.pid`, fps: 5, width: 321, height: 201 }, frames, new AbortController().signal);
    expect(video).toMatchObject({ ok: true, durationMs: 5_000, width: 320, height: 200 });
    // Far quicker than the five seconds it shows.
    expect(Date.now() - startedAt).toBeLessThan(4_500);
    expect((await probeVideo(file))!.durationMs).toBeGreaterThan(4_500);
    const colours = await frameColors(file);
    expect(colours.filter(isRed)).toHaveLength(15);
    expect(colours.slice(15).every(isBlue)).toBe(true);
  });

  it('kills ffmpeg when aborted and says the video is not whole', async () => {
    const file = path.join(folder, 'aborted.mp4');
    const abort = new AbortController();
    // Enough busy 1080p frames that ffmpeg is still at work when the stop comes.
    const encoding = encodeFrames({ file, pidFile: `${file}.pid`, fps: 5, width: 1920, height: 1080 }, Array.from({ length: 400 }, () => frame), abort.signal);
    await expect.poll(async () => readFile(`${file}.pid`, 'utf8').catch(() => '')).not.toBe('');
    abort.abort();
    const video = await encoding;
    expect(video.ok).toBe(false);
    expect(video.diagnostics).toMatch(/^stopped/);
  });
});

