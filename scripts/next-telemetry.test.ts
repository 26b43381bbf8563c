import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextEnvironment } from './ensure-console-build.mjs';

const root = path.resolve(import.meta.dirname, '..');

// A self-hosted service contacts nothing but its own configuration: Next.js telemetry is
// off wherever the project runs `next`.
describe('Next.js telemetry', () => {
  it('is off in the environment the console build and npm start run next with', () => {
    const status = spawnSync(process.execPath, [path.join(root, 'node_modules/next/dist/bin/next'), 'telemetry', 'status'], {
      cwd: root,
      env: nextEnvironment(),
      encoding: 'utf8',
    });
    expect(status.stdout).toMatch(/opted-out/);
    expect(readFileSync(path.join(root, 'scripts/start.mjs'), 'utf8')).toContain("process.env.NEXT_TELEMETRY_DISABLED = '1'");
  });

  it('is off in every npm script that runs next', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const runningNext = Object.values(scripts).filter((command) => /\bnext\b/.test(command));
    expect(runningNext.length).toBeGreaterThan(0);
    for (const command of runningNext) expect(command).toContain('NEXT_TELEMETRY_DISABLED=1');
  });
});
