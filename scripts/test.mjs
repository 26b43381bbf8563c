// `npm test`: vitest, then Playwright's end-to-end tests, which need the console built.
// The build (next build with its type check of the whole project: about 90 s on a 2-core
// host) runs beside vitest at the lowest priority. vitest's integration tests leave a core
// idle about a third of the time, waiting on browsers and timers, and the build takes that
// time instead of running after them; at niceness 19 the scheduler gives the tests the CPU
// whenever they want it. Its output is held back and printed after vitest's.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

/** Runs a command in the project folder; resolves to its exit code and, when `quiet`, its output. */
function run(command, args, { quiet = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const output = [];
    child.stdout?.on('data', (chunk) => output.push(chunk));
    child.stderr?.on('data', (chunk) => output.push(chunk));
    child.once('error', (error) => resolve({ code: 1, output: `${command}: ${error.message}\n` }));
    child.once('close', (code) => resolve({ code: code ?? 1, output: Buffer.concat(output).toString() }));
  });
}

const consoleBuild = run(
  'nice',
  ['-n', '19', process.execPath, '--input-type=module', '--eval', "import { ensureConsoleBuild } from './scripts/ensure-console-build.mjs'; ensureConsoleBuild();"],
  { quiet: true },
);
const vitest = await run(bin('vitest'), ['run']);
const built = await consoleBuild;
process.stdout.write(built.output);
if (vitest.code !== 0) process.exit(vitest.code);
if (built.code !== 0) process.exit(built.code);
process.exit((await run(bin('playwright'), ['test'])).code);
