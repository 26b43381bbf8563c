// `npm start`: builds the console once if there is no build yet (or the sources are newer),
// then runs the server (server/main.ts) in this same process through tsx, so signals reach
// it directly.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const buildId = path.join(root, '.next', 'BUILD_ID');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

const consoleSources = [path.join(root, 'app'), path.join(root, 'next.config.js')];
const buildTime = existsSync(buildId) ? statSync(buildId).mtimeMs : 0;
const sourcesTime = Math.max(...consoleSources.map((source) => (statSync(source).isDirectory() ? newestMtime(source) : statSync(source).mtimeMs)));
if (buildTime < sourcesTime) {
  console.log('Building the console (first start, or its sources changed)...');
  const build = spawnSync(process.execPath, [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) {
    console.error('The console build failed; see the output above.');
    process.exit(1);
  }
}

const { register } = await import('tsx/esm/api');
register();
await import('../server/main.ts');
