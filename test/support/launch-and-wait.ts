// A stand-in for a service process, for the tests of browser keepers: it launches a
// device's browser through the local provider, types `text` into the /form page's city
// field, prints the handle's pid and incarnation as one JSON line, and waits to be
// killed (kill -9: no shutdown code runs, as when a service crashes).
// Usage: node --import tsx launch-and-wait.ts <dataDir> <deviceId> <formUrl> <text>
import { LocalBrowserProvider } from '../../server/browser/local-provider';
import { BROWSER_ISOLATION, CHROMIUM_PATH } from './browser-fixtures';

const [dataDir, deviceId, formUrl, text] = process.argv.slice(2) as [string, string, string, string];
const provider = new LocalBrowserProvider({ chromiumPath: CHROMIUM_PATH, dataDir, ...BROWSER_ISOLATION, egress: null });
const handle = await provider.launch({ deviceId, orgId: 'org-1' });
const driver = await handle.page();
await driver.navigate(formUrl);
await driver.type(text, 'Your city');
process.stdout.write(`${JSON.stringify({ pid: handle.pid, incarnation: handle.incarnation })}\n`);
setInterval(() => undefined, 60_000);
