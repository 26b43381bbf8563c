import { defineConfig } from '@playwright/test';

// End-to-end tests in a real browser: Debian's Chromium, never a downloaded one.
export default defineConfig({
  testDir: 'e2e',
  globalSetup: './e2e/global-setup.ts',
  timeout: 60_000,
  // Two browsers at once on the suite's shared service (one spec runs its own, which it
  // restarts): 2.0 min against 2.6 with one on a 2-core host. Specs find what they made
  // by its own name or id, never by its place among everyone's.
  workers: 2,
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
});
