import { defineConfig } from 'vitest/config';

// Integration tests start real servers, real PostgreSQL databases and real Chromium
// processes; two workers match the two cores CI has.
export default defineConfig({
  test: {
    include: ['server/**/*.test.ts', 'db/**/*.test.ts', 'scripts/**/*.test.ts', 'bench/**/*.test.ts', 'test/**/*.test.ts', 'shared/**/*.test.ts'],
    exclude: ['node_modules', 'e2e/**', '.data/**'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
