import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ffprobe } from './video-probe';

const run = promisify(execFile);

/** A greyscale picture: one byte per pixel, row by row. */
export interface GrayImage {
  width: number;
  height: number;
  pixels: Buffer;
}

export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Every frame of an image or video file, decoded by ffmpeg to greyscale at its own size. */
export async function grayFrames(file: string): Promise<GrayImage[]> {
  const { width, height } = await ffprobe(file);
  const { stdout } = await run('/usr/bin/ffmpeg', ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], { encoding: 'buffer', maxBuffer: 512 * 1024 * 1024 });
  const frames: GrayImage[] = [];
  for (let offset = 0; offset + width * height <= stdout.length; offset += width * height) {
    frames.push({ width, height, pixels: stdout.subarray(offset, offset + width * height) });
  }
  return frames;
}

/**
 * The mean absolute difference (0-255) between two regions of the same size, given in CSS
 * pixels of a viewport `viewportWidth` wide and scaled to the image.
 */
export function regionDifference(image: GrayImage, a: Region, b: Region, viewportWidth: number): number {
  const scale = image.width / viewportWidth;
  const width = Math.floor(a.width * scale);
  const height = Math.floor(a.height * scale);
  let total = 0;
  for (let row = 0; row < height; row += 1) {
    for (let column = 0; column < width; column += 1) {
      const pa = image.pixels[(Math.floor(a.y * scale) + row) * image.width + Math.floor(a.x * scale) + column]!;
      const pb = image.pixels[(Math.floor(b.y * scale) + row) * image.width + Math.floor(b.x * scale) + column]!;
      total += Math.abs(pa - pb);
    }
  }
  return total / (width * height);
}

/** How far a region is from plain white, on average (0: blank). */
export function regionInk(image: GrayImage, region: Region, viewportWidth: number): number {
  const scale = image.width / viewportWidth;
  let total = 0;
  let count = 0;
  for (let row = 0; row < Math.floor(region.height * scale); row += 1) {
    for (let column = 0; column < Math.floor(region.width * scale); column += 1) {
      total += 255 - image.pixels[(Math.floor(region.y * scale) + row) * image.width + Math.floor(region.x * scale) + column]!;
      count += 1;
    }
  }
  return total / count;
}
