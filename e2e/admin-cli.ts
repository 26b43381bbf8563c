import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** Runs `npm run admin -- ...` against the e2e service's database; returns its JSON. */
export function admin(...args: string[]): any {
  return adminOn(process.env.E2E_DATABASE_URL!, ...args);
}

/** Runs `npm run admin -- ...` against the database at `databaseUrl` (a service a spec started itself). */
export function adminOn(databaseUrl: string, ...args: string[]): any {
  const output = execFileSync(process.execPath, [path.join('node_modules', 'tsx', 'dist', 'cli.mjs'), 'server/cli/admin.ts', ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  return JSON.parse(output);
}
