import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** Runs `npm run admin -- ...` against the e2e service's database; returns its JSON. */
export function admin(...args: string[]): any {
  const output = execFileSync(process.execPath, [path.join('node_modules', 'tsx', 'dist', 'cli.mjs'), 'server/cli/admin.ts', ...args], {
    env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL! },
    encoding: 'utf8',
  });
  return JSON.parse(output);
}
