import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadHostId } from './host-id';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'host-id-'));
  dirs.push(dir);
  return dir;
}

describe('loadHostId', () => {
  it('keeps one id per data directory across loads (restarts), and differs between directories', async () => {
    const first = await tempDir();
    const id = await loadHostId(first);
    expect(id).toMatch(/^host_[0-9a-f-]{36}$/);
    expect(await loadHostId(first)).toBe(id);
    expect(await loadHostId(await tempDir())).not.toBe(id);
  });

  it('gives concurrent first loads the same id', async () => {
    const dir = path.join(await tempDir(), 'fresh');
    const ids = await Promise.all(Array.from({ length: 5 }, () => loadHostId(dir)));
    expect(new Set(ids).size).toBe(1);
  });
});
