import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Integration tests start real servers, real PostgreSQL databases and real Chromium
// processes; two workers match the two cores CI has.
export default defineConfig({
  // Tests and examples use the SDK from its source, as the root tsconfig's paths do.
  resolve: { alias: { '@browser-device-operator/sdk': path.resolve(import.meta.dirname, 'sdk/src/index.ts') } },
  test: {
    include: ['sdk/**/*.test.ts', 'examples/**/*.test.ts', 'server/**/*.test.ts', 'db/**/*.test.ts', 'scripts/**/*.test.ts', 'bench/**/*.test.ts', 'test/**/*.test.ts', 'shared/**/*.test.ts'],
    exclude: ['node_modules', '**/node_modules/**', 'sdk/dist/**', 'e2e/**', '.data/**'],
    pool: 'forks',
    // A worker runs its files one after another in one process, modules loaded once: a
    // fresh process per file spent about a quarter of the suite importing the service
    // again and again (import 452 s of a 1753 s run). Files must leave the process's
    // globals as they found them, which the guard checks.
    isolate: false,
    setupFiles: ['test/support/shared-worker-guard.ts'],
    maxWorkers: 2,
    // Bounds for a hung test, not figures: a 2-core host of the slower kind ran tests that
    // start devices, services and CLIs at 2.5 times a faster one's time, past 60 s.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // The credential vault's key for every service a test starts (in process or as a child,
    // which inherits the environment): the start refuses without one on DATABASE_URL.
    // One random key per run, so restarts within a run read what they sealed.
    env: { OPERATOR_SECRETS_KEY: process.env.OPERATOR_SECRETS_KEY ?? randomBytes(32).toString('base64') },
  },
});
