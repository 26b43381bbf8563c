import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

// A process manager that signals only its main process (systemd's KillMode=process, which
// the README asks for, or a container's init) signals npm. The project's start script, its
// entry point swapped for a stub that reports the signals it gets, must hand that signal to
// the service: through a plain `sh -c`, the shell died with npm and the service never knew.
const STUB = `
import { writeFileSync } from 'node:fs';
writeFileSync('pid', String(process.pid));
process.on('SIGTERM', () => { process.stdout.write('SIGTERM\\n'); process.exit(0); });
process.stdout.write('ready\\n');
setInterval(() => undefined, 1_000);
`;

let folder: string | undefined;
afterEach(async () => {
  if (folder === undefined) return;
  // A stub the signal did not reach would run on, orphaned: it is stopped here.
  const pid = Number(await readFile(path.join(folder, 'pid'), 'utf8').catch(() => ''));
  if (pid > 0) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // it exited, as it should have
    }
  }
  await rm(folder, { recursive: true, force: true });
  folder = undefined;
});

describe('npm start', () => {
  it('hands a SIGTERM sent to npm alone to the service', async () => {
    const manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
    expect(manifest.scripts.start).toContain('scripts/start.mjs');
    folder = await mkdtemp(path.join(tmpdir(), 'npm-start-signals-'));
    await writeFile(path.join(folder, 'stub.mjs'), STUB);
    await writeFile(path.join(folder, 'package.json'), JSON.stringify({ name: 'stub', private: true, scripts: { start: manifest.scripts.start.replace('scripts/start.mjs', 'stub.mjs') } }));

    const npm = spawn('npm', ['run', '--silent', 'start'], { cwd: folder, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    const ready = new Promise<void>((resolve) =>
      npm.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('ready')) resolve();
      }),
    );
    await ready;
    npm.kill('SIGTERM');
    await once(npm, 'exit');
    // The stub printed that it got the signal before npm exited with it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(output).toContain('SIGTERM');
  });
});
