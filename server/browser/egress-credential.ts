import type { Page } from 'puppeteer-core';
import { EGRESS_CREDENTIAL_CHECK_URL } from '../net/egress-proxy.js';

/**
 * Gives a device's browser context the credential the egress proxy asks of it (a proxy on
 * an internal address, reached from browserless on other hosts): a request to the proxy's
 * own check address is answered 407, Chromium asks DevTools (puppeteer's `authenticate`
 * answers `Fetch.authRequired`) and caches the answer for the context, then sends it with
 * every later request of the context, its pages, frames and workers alike, with nothing
 * intercepted any more. Another context never has it. Throws when the proxy cannot be
 * reached or refuses the credential: such a device would have no network.
 */
export async function giveEgressCredential(page: Page, credentials: { username: string; password: string }): Promise<void> {
  await page.authenticate(credentials);
  try {
    await page.evaluate(async (url) => {
      await fetch(url, { mode: 'no-cors', cache: 'no-store' });
    }, EGRESS_CREDENTIAL_CHECK_URL);
  } finally {
    await page.authenticate(null);
  }
}
