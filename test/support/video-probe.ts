import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A video (or picture) as a file, or as the bytes a route answered with. */
type Video = string | Uint8Array;

/** `read` on the video's file: bytes are written to a folder of their own, removed after. */
async function asFile<T>(video: Video, read: (file: string) => Promise<T>): Promise<T> {
  if (typeof video === 'string') return read(video);
  const folder = await mkdtemp(path.join(tmpdir(), 'video-probe-'));
  try {
    const file = path.join(folder, 'video');
    await writeFile(file, video);
    return await read(file);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** ffprobe's reading of a video: its duration (seconds), frame size and codec. */
export async function ffprobe(video: Video): Promise<{ duration: number; width: number; height: number; codec: string }> {
  const { stdout } = await asFile(video, (file) => run('/usr/bin/ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height,codec_name:format=duration', '-of', 'json', file]));
  const parsed = JSON.parse(stdout) as { streams: Array<{ width: number; height: number; codec_name: string }>; format: { duration: string } };
  const stream = parsed.streams[0]!;
  return { duration: Number(parsed.format.duration), width: stream.width, height: stream.height, codec: stream.codec_name };
}

/** The average colour of every frame of a video, decoded by ffmpeg, in order. */
export async function frameColors(video: Video): Promise<Array<[number, number, number]>> {
  const { stdout } = await asFile(video, (file) =>
    run('/usr/bin/ffmpeg', ['-v', 'error', '-i', file, '-vf', 'scale=4:4', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    }),
  );
  const frameBytes = 4 * 4 * 3;
  const colors: Array<[number, number, number]> = [];
  for (let offset = 0; offset + frameBytes <= stdout.length; offset += frameBytes) {
    const sum = [0, 0, 0];
    for (let pixel = 0; pixel < 16; pixel += 1) for (let channel = 0; channel < 3; channel += 1) sum[channel]! += stdout[offset + pixel * 3 + channel]!;
    colors.push([sum[0]! / 16, sum[1]! / 16, sum[2]! / 16]);
  }
  return colors;
}

/** Whether a colour is clearly red, or clearly blue (the encoder shifts them a little). */
export const isRed = ([r, g, b]: [number, number, number]) => r > 180 && g < 80 && b < 80;
export const isBlue = ([r, g, b]: [number, number, number]) => b > 180 && r < 80 && g < 80;
