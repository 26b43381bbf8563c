import { startRemoteChromium, makeTempDir, type RemoteChromium } from '../support/browser-fixtures';
import { deviceCoreSuite } from './devices-core-suite';

// A plain Chromium with --remote-debugging-port=0 on 127.0.0.1 speaks the CDP a
// browserless endpoint speaks; devices then live in their own contexts of that browser.
let remote: RemoteChromium | undefined;
let profile: Awaited<ReturnType<typeof makeTempDir>> | undefined;

deviceCoreSuite('browserless (CDP endpoint)', {
  local: false,
  async env() {
    profile = await makeTempDir('operator-remote-chromium-');
    remote = await startRemoteChromium(profile.dir);
    return { OPERATOR_BROWSER: 'browserless', BROWSERLESS_URL: remote.webSocketUrl };
  },
  async teardown() {
    await remote?.stop();
    await profile?.remove();
  },
});
