import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jpegSize } from './jpeg-size';

describe('jpegSize', () => {
  it('reads the size of JPEGs ffmpeg writes', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'jpeg-size-'));
    try {
      for (const size of ['800x500', '1280x800', '321x123']) {
        const file = path.join(folder, `${size}.jpg`);
        execFileSync('/usr/bin/ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=${size}`, '-frames:v', '1', file]);
        const [width, height] = size.split('x').map(Number);
        expect(jpegSize(readFileSync(file))).toEqual({ width, height });
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('answers null for bytes that are no JPEG or hold no frame header', () => {
    expect(jpegSize(Buffer.from('not a jpeg at all'))).toBeNull();
    expect(jpegSize(Buffer.from([0xff, 0xd8, 0xff, 0xd9]))).toBeNull();
    expect(jpegSize(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x40, 0x00]))).toBeNull();
  });
});
