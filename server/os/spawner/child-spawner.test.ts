import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, parentPid } from '../processes';
import { spawnPiped } from './child-spawner';

const CHILD_SPAWNER = path.join(import.meta.dirname, 'child-spawner.ts');

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'child-spawner-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('spawnPiped', () => {
  it('starts the child in the spawner, not in this process, hands over its stdin, and tells its end with its stderr', async () => {
    const child = await spawnPiped('/bin/sh', ['-c', 'cat >&2; exit 3']);
    // Forked by the spawner: this process never copied its memory for it.
    const parent = await parentPid(child.pid);
    expect(parent).not.toBeNull();
    expect(parent).not.toBe(process.pid);
    expect(await parentPid(parent!)).toBe(process.pid);
    child.stdin.end('through the pipe\n');
    expect(await child.exited).toEqual({ code: 3, signal: null, stderr: 'through the pipe\n' });
  });

  it('gives the child none of the service environment, only PATH', async () => {
    process.env.SPAWNER_TEST_SECRET = 'not for children';
    try {
      // stdout is ignored: the shell writes the environment to stderr, at once (what a
      // child writes before the service holds its stdin is kept too).
      const shell = await spawnPiped('/bin/sh', ['-c', 'env >&2']);
      const end = await shell.exited;
      if (!('stderr' in end)) throw new Error(end.error);
      const names = end.stderr.trim().split('\n').map((line) => line.split('=')[0]);
      expect(names).toContain('PATH');
      expect(names).not.toContain('SPAWNER_TEST_SECRET');
      expect(names).not.toContain('OPERATOR_SECRETS_KEY');
    } finally {
      delete process.env.SPAWNER_TEST_SECRET;
    }
  });

  it('starts a child at the niceness asked for, background work giving way', async () => {
    const child = await spawnPiped('/bin/sh', ['-c', 'cat > /dev/null'], { niceness: 10 });
    // /proc/<pid>/stat after the command name: the niceness is the 17th field.
    const stat = await readFile(`/proc/${child.pid}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])).toBe(10);
    child.stdin.end();
    await child.exited;
  });

  it('rejects a child that cannot start, with why', async () => {
    await expect(spawnPiped('/nonexistent/encoder', [])).rejects.toThrow(/ENOENT/);
  });

  it('starts a new spawner after its spawner died, and still tells when an orphaned child ends', async () => {
    const orphan = await spawnPiped('/bin/sh', ['-c', 'cat > /dev/null']);
    const spawnerPid = (await parentPid(orphan.pid))!;
    process.kill(spawnerPid, 'SIGKILL');
    await expect.poll(() => isRunning(spawnerPid)).toBe(false);
    // Its input still ends when this process ends it, and its end is seen by its pid.
    orphan.stdin.end();
    expect(await orphan.exited).toEqual({ error: expect.stringMatching(/exit status is unknown/) });
    const next = await spawnPiped('/bin/true', []);
    expect(await parentPid(next.pid)).not.toBe(spawnerPid);
    next.stdin.end();
    expect(await next.exited).toEqual({ code: 0, signal: null, stderr: '' });
  });

  it('leaves no spawner behind a service killed right after it asked for a child', async () => {
    const marker = path.join(folder, 'spawner-pid');
    // Killed at once: the request waits in the channel for a spawner still starting, which
    // finds its service gone, and a stdin it can hand to no one.
    const service = spawn(process.execPath, ['--import', 'tsx', '-e', `
      import('${CHILD_SPAWNER}').then(({ spawnPiped }) => {
        void spawnPiped('/bin/sh', ['-c', 'echo $PPID > ${marker}; cat > /dev/null']);
        process.kill(process.pid, 'SIGKILL');
      });
    `], { stdio: 'ignore' });
    await new Promise((resolve) => service.once('exit', resolve));
    let spawnerPid = 0;
    await expect.poll(async () => (spawnerPid = Number(await readFile(marker, 'utf8').catch(() => '0'))), { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => isRunning(spawnerPid), { timeout: 10_000 }).toBe(false);
  });

  it('leaves no spawner behind a killed service, and its children see their input end', async () => {
    // A service of its own, killed with SIGKILL while its child reads its stdin.
    const marker = path.join(folder, 'input-ended');
    const service = spawn(process.execPath, ['--import', 'tsx', '-e', `
      import('${CHILD_SPAWNER}').then(async ({ spawnPiped }) => {
        const child = await spawnPiped('/bin/sh', ['-c', 'cat > /dev/null; echo ended > ${marker}']);
        console.log(child.pid);
        setInterval(() => undefined, 1000);
      });
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childPid = Number(await new Promise<string>((resolve) => service.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString()))));
    const spawnerPid = (await parentPid(childPid))!;
    expect(await parentPid(spawnerPid)).toBe(service.pid);
    service.kill('SIGKILL');
    await expect.poll(() => readFile(marker, 'utf8').catch(() => ''), { timeout: 10_000 }).toBe('ended\n');
    await expect.poll(() => isRunning(spawnerPid), { timeout: 10_000 }).toBe(false);
  });

  it('starts the spawner ahead of any child, without keeping its service running', async () => {
    const marker = path.join(folder, 'started-spawner');
    // The service's start: the spawner runs before the first recording asks for ffmpeg.
    const service = spawn(process.execPath, ['--import', 'tsx', '-e', `
      import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
      import('${CHILD_SPAWNER}').then(({ startSpawner }) => {
        startSpawner();
        setTimeout(() => {
          const spawners = readdirSync('/proc').filter((pid) => /^\\d+$/.test(pid)).filter((pid) => {
            try {
              const stat = readFileSync('/proc/' + pid + '/stat', 'utf8');
              // A Node told this process's pid (esbuild's service, tsx's, is a child too).
              const args = readFileSync('/proc/' + pid + '/cmdline', 'utf8').split('\\0');
              return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid && args.includes(String(process.pid));
            } catch {
              return false;
            }
          });
          writeFileSync('${marker}', spawners.join(' '));
        }, 2000);
      });
    `], { stdio: 'ignore' });
    const exitCode = await new Promise((resolve) => service.once('exit', resolve));
    expect(exitCode).toBe(0);
    const spawners = (await readFile(marker, 'utf8')).split(' ').filter(Boolean).map(Number);
    expect(spawners).toHaveLength(1);
    // It goes with its service.
    await expect.poll(() => isRunning(spawners[0]!), { timeout: 10_000 }).toBe(false);
  });
});
