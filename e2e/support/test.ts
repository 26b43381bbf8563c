import { test as playwrightTest } from '@playwright/test';

export { expect } from '@playwright/test';

/**
 * Playwright's `test` whose `request` sends every call on a connection of its own
 * (`Connection: close`). Playwright's request context keeps an idle socket with no timeout
 * of its own (it does not read the server's `Keep-Alive: timeout=5`), and the service closes
 * one idle for 6 s (docs/api.md, "Connections"): a call sent on it while the spec's busy event
 * loop (a screenshot, an accessibility scan) had not yet seen that close fails with
 * `read ECONNRESET`. Reusing connections is the integration suite's to test
 * (test/integration/http-connections.test.ts), not the end-to-end specs'.
 */
export const test = playwrightTest.extend({
  request: async ({ playwright }, use) => {
    const request = await playwright.request.newContext({ extraHTTPHeaders: { Connection: 'close' } });
    await use(request);
    await request.dispose();
  },
});
