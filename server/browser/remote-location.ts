// Where a remote (browserless) device's browser runs, as one opaque string a host stores
// with the device (BrowserHandle.location) and another host hands back to adopt it
// (LaunchRequest.adopt): the browser's id in browserless's /devtools/browser/<id>, the
// device's browser context in it, and the browser's incarnation (which stays the same
// whichever host's keeper holds it).

export interface RemoteLocation {
  browserId: string;
  contextId: string;
  incarnation: string;
}

const PREFIX = 'browserless:';

export function remoteLocation(location: RemoteLocation): string {
  return `${PREFIX}${JSON.stringify({ browser: location.browserId, context: location.contextId, incarnation: location.incarnation })}`;
}

/** null for a string this module did not write. */
export function parseRemoteLocation(text: string): RemoteLocation | null {
  if (!text.startsWith(PREFIX)) return null;
  try {
    const parsed = JSON.parse(text.slice(PREFIX.length)) as { browser?: unknown; context?: unknown; incarnation?: unknown };
    if (typeof parsed.browser !== 'string' || typeof parsed.context !== 'string' || typeof parsed.incarnation !== 'string') return null;
    if (!/^[\w-]+$/.test(parsed.browser)) return null;
    return { browserId: parsed.browser, contextId: parsed.context, incarnation: parsed.incarnation };
  } catch {
    return null;
  }
}
