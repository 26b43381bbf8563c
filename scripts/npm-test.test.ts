import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

// `npm test` (scripts/test.mjs) in a folder of its own where vitest, Playwright and the
// console build are stubs that log when they start and end, and with what niceness: the
// build must run beside vitest at the lowest priority, its output after vitest's, and
// Playwright only once both succeeded. A stub with a `partner` ends only once the partner
// has started too, 30 s at most: a build started at niceness 19 on a loaded host can take
// longer to start than a fixed pause of vitest's, and run one after the other, the two
// still end in the wrong order (after that wait).
const LOGGING_STUB = (name: string, partner?: string) => `#!/bin/sh
echo "${name} start $(cut -d' ' -f19 /proc/$$/stat)" >> "$LOG"
sleep 0.5
${partner === undefined ? '' : `for i in $(seq 300); do grep -q '^${partner} start' "$LOG" && break; sleep 0.1; done`}
echo "${name} output"
echo "${name} end" >> "$LOG"
exit "\${${name.toUpperCase()}_EXIT:-0}"
`;
const BUILD_STUB = `import { execFileSync } from 'node:child_process';
export function ensureConsoleBuild() {
  execFileSync('sh', ['-c', ${JSON.stringify(LOGGING_STUB('build', 'vitest'))}], { stdio: 'inherit' });
}
`;

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

async function npmTest(env: Record<string, string> = {}): Promise<{ code: number; stdout: string; log: string[] }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'npm-test-'));
  folders.push(folder);
  await mkdir(path.join(folder, 'scripts'));
  await mkdir(path.join(folder, 'node_modules', '.bin'), { recursive: true });
  await copyFile(path.join(root, 'scripts', 'test.mjs'), path.join(folder, 'scripts', 'test.mjs'));
  await writeFile(path.join(folder, 'scripts', 'ensure-console-build.mjs'), BUILD_STUB);
  for (const [name, partner] of [['vitest', 'build'], ['playwright', undefined]] as const) {
    const stub = path.join(folder, 'node_modules', '.bin', name);
    await writeFile(stub, LOGGING_STUB(name, partner));
    await chmod(stub, 0o755);
  }
  const log = path.join(folder, 'log');
  const options = { cwd: folder, env: { ...process.env, LOG: log, ...env } };
  const result = await run(process.execPath, ['scripts/test.mjs'], options).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  return { ...result, log: (await readFile(log, 'utf8')).trim().split('\n') };
}

describe('npm test', () => {
  it('builds the console beside vitest at niceness 19, prints the build after vitest, then runs Playwright', async () => {
    const manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { scripts: { test: string } };
    expect(manifest.scripts.test).toBe('node scripts/test.mjs');
    const { code, stdout, log } = await npmTest();
    expect(code).toBe(0);
    // Both started before either ended.
    expect(log.slice(0, 2).sort()).toEqual([`build start 19`, `vitest start ${currentNiceness()}`].sort());
    expect(log.slice(2, 4).sort()).toEqual(['build end', 'vitest end']);
    expect(log.slice(4)).toEqual([expect.stringMatching(/^playwright start /), 'playwright end']);
    expect(stdout.split('\n').filter(Boolean)).toEqual(['vitest output', 'build output', 'playwright output']);
  });

  it('runs no Playwright when vitest or the build failed, and fails with its code', async () => {
    const failedTests = await npmTest({ VITEST_EXIT: '3' });
    expect(failedTests.code).toBe(3);
    expect(failedTests.log.filter((line) => line.startsWith('playwright'))).toEqual([]);
    const failedBuild = await npmTest({ BUILD_EXIT: '1' });
    expect(failedBuild.code).toBe(1);
    expect(failedBuild.stdout).toContain('build output');
    expect(failedBuild.log.filter((line) => line.startsWith('playwright'))).toEqual([]);
  });
});

/** This process's niceness (field 19 of /proc/self/stat), which vitest's stub inherits. */
function currentNiceness(): string {
  return readFileSync('/proc/self/stat', 'utf8').split(' ')[18]!;
}
