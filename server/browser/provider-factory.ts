import type { BrowserUserRange } from './browser-users.js';
import { BrowserlessProvider } from './browserless-provider.js';
import type { DeviceStateStore } from './device-state.js';
import { LocalBrowserProvider } from './local-provider.js';
import { BrowserLaunchError, type BrowserProvider, type EgressGate } from './types.js';

/** Plain options the service's config module fills in; this module reads no environment. */
export interface BrowserProviderOptions {
  kind: 'local' | 'browserless';
  /** Local Chromium executable; null looks for chromium, chromium-browser, google-chrome on PATH. */
  chromiumPath: string | null;
  /** browserless WebSocket endpoint with its token, e.g. ws://host:3000?token=...; required for browserless. */
  browserlessUrl: string | null;
  /** Root of per-device state: <dataDir>/profiles/<deviceId>. */
  dataDir: string;
  /** Local provider only; defaults to true. */
  headless?: boolean;
  /** The egress proxy browsers must use; null only where the deployment enforces egress itself. */
  egress: EgressGate | null;
  /** Where remote devices keep cookies and localStorage between launches; required for browserless. */
  deviceStates?: DeviceStateStore;
  /** Local provider only: the uids and group its browsers run as when the service runs as root. */
  browserUsers: BrowserUserRange;
  /** Local provider only: start Chromium unsandboxed where the kernel offers no sandbox. */
  allowUnsandboxed: boolean;
  /** With no service connected, how long a browser's keeper waits for one (OPERATOR_BROWSER_KEEP_SECS). */
  keepSecs: number;
}

export function createBrowserProvider(options: BrowserProviderOptions): BrowserProvider {
  switch (options.kind) {
    case 'local':
      return new LocalBrowserProvider({
        chromiumPath: options.chromiumPath,
        dataDir: options.dataDir,
        headless: options.headless,
        egress: options.egress,
        users: options.browserUsers,
        allowUnsandboxed: options.allowUnsandboxed,
        keepSecs: options.keepSecs,
      });
    case 'browserless':
      if (options.browserlessUrl === null) {
        throw new BrowserLaunchError('the browserless provider needs an endpoint: set BROWSERLESS_URL', false);
      }
      if (options.deviceStates === undefined) {
        throw new BrowserLaunchError('the browserless provider needs a store for device states', false);
      }
      return new BrowserlessProvider({
        endpoint: options.browserlessUrl,
        deviceStates: options.deviceStates,
        egress: options.egress,
        dataDir: options.dataDir,
        keepSecs: options.keepSecs,
      });
  }
}
