import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { keeperScript } from './keeper-script.js';

let dir: string;

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('keeperScript', () => {
  it("writes the keeper's bundle once, the service's alone, and removes earlier versions' scripts only", async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'keeper-script-'));
    await writeFile(path.join(dir, 'keeper-process-0123456789abcdef.cjs'), 'an earlier version');
    await writeFile(path.join(dir, 'device.sock'), '');
    const script = await keeperScript(dir);
    expect(path.basename(script)).toMatch(/^keeper-process-[0-9a-f]{16}\.cjs$/);
    expect((await stat(script)).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).sort()).toEqual(['device.sock', path.basename(script)].sort());
    const written = (await stat(script)).mtimeMs;
    expect(await keeperScript(dir)).toBe(script);
    expect((await stat(script)).mtimeMs).toBe(written);
  });

  it('runs on Node with no type stripping: a start it cannot read is answered on stdout', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'keeper-script-'));
    const script = await keeperScript(dir);
    const run = promisify(execFile)(process.execPath, ['--no-experimental-strip-types', script]);
    run.child.stdin!.end('not a start');
    const failed = await run.then(
      () => null,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(JSON.parse(failed!.stdout.split('\n')[0]!)).toMatchObject({ ready: false, reason: 'failed' });
  });
});
