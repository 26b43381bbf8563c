import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * One JPEG of an ffmpeg test source, as a screencast sends a frame: `color=c=red:s=320x200`
 * for a plain page, `testsrc2=s=1920x1080` with `quality` 1 for a busy one (about 120 kB).
 */
export async function lavfiJpeg(source: string, quality?: number): Promise<Buffer> {
  const { stdout } = await run(
    '/usr/bin/ffmpeg',
    ['-v', 'error', '-f', 'lavfi', '-i', source, '-frames:v', '1', ...(quality === undefined ? [] : ['-q:v', String(quality)]), '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
}
