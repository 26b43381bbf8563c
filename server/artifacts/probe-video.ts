import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What ffprobe reads of a video file; null when it is no video it can read. */
export async function probeVideo(file: string): Promise<{ durationMs: number; width: number; height: number } | null> {
  try {
    const { stdout } = await run(
      '/usr/bin/ffprobe',
      ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height:format=duration', '-of', 'json', file],
      { timeout: 30_000 },
    );
    const parsed = JSON.parse(stdout) as { streams?: Array<{ width?: number; height?: number }>; format?: { duration?: string } };
    const stream = parsed.streams?.[0];
    const duration = Number(parsed.format?.duration);
    if (stream?.width === undefined || stream.height === undefined || !Number.isFinite(duration)) return null;
    return { durationMs: Math.round(duration * 1000), width: stream.width, height: stream.height };
  } catch {
    return null;
  }
}
