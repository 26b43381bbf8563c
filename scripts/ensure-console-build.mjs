// Builds the Next.js console when there is no build yet or its sources are newer than it.
// Shared by `npm start` and the end-to-end tests.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function newestMtime(target) {
  if (!statSync(target).isDirectory()) return statSync(target).mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

/**
 * The environment every `next` command of the project runs with. Telemetry is off: a
 * self-hosted service reports nothing anywhere unless its operator opts in.
 */
export function nextEnvironment() {
  return { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
}

export function ensureConsoleBuild() {
  const buildId = path.join(root, '.next', 'BUILD_ID');
  const buildTime = existsSync(buildId) ? statSync(buildId).mtimeMs : 0;
  const sourcesTime = Math.max(...['app', 'shared', 'next.config.js'].map((source) => newestMtime(path.join(root, source))));
  if (buildTime >= sourcesTime) return;
  console.log('Building the console (first start, or its sources changed)...');
  const build = spawnSync(process.execPath, [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], { cwd: root, stdio: 'inherit', env: nextEnvironment() });
  if (build.status !== 0) throw new Error('The console build failed; see the output above.');
}
