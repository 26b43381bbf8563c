import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EgressPolicy } from '../net/egress-policy.js';
import { EgressProxy } from '../net/egress-proxy.js';
import { BROWSER_ISOLATION, CHROMIUM_PATH, makeTempDir, startPageServer, type PageServer } from '../../test/support/browser-fixtures.js';
import { LocalBrowserProvider } from './local-provider.js';
import type { BrowserHandle } from './types.js';

// What a device's Chromium asks of the network by itself, seen where every request of it
// goes: the egress proxy.
let server: PageServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let proxy: EgressProxy;
let handle: BrowserHandle;

beforeAll(async () => {
  server = await startPageServer();
  temp = await makeTempDir('chromium-flags-');
  // Only the test's pages' name resolves, on any machine: a request to any other name is
  // refused, and remembered.
  const onlyLocalhost = async (hostname: string) => {
    if (hostname === 'localhost') return [{ address: '127.0.0.1', family: 4 as const }];
    throw new Error(`${hostname} does not resolve in this test`);
  };
  proxy = await EgressProxy.start(new EgressPolicy({ allowPrivate: true, resolve: onlyLocalhost }));
  const provider = new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir: temp.dir, ...BROWSER_ISOLATION, egress: proxy });
  handle = await provider.launch({ deviceId: 'flags-device', orgId: 'org-1' });
});

afterAll(async () => {
  await handle?.close();
  await proxy?.close();
  await server?.close();
  await temp?.remove();
});

it("describes none of its pages' forms to Google's autofill server", async () => {
  const since = Date.now();
  const driver = await handle.page();
  await driver.navigate(server.url('/form'));
  await driver.type('a@example.com', '#email');
  // Chromium asked within moments of a form's parsing, every time (three times a task).
  await delay(1_500);
  expect(await proxy.refusedSince('https://content-autofill.googleapis.com/', since)).toBe(false);
});
