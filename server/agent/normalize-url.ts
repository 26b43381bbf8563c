/**
 * Turns what a prompt or a model wrote after "go to" into an absolute http(s) URL, or null.
 * A bare host ("example.com/path") gets `https://`, the scheme a user typing an address means
 * today. Any scheme other than http and https is refused: `file:`, `javascript:`, `data:` or
 * `chrome:` pages would reach the device's own machine or browser internals.
 */
export function normalizeUrl(raw: string): string | null {
  const text = raw.trim();
  if (text === '' || /\s/.test(text)) return null;
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
  // "mailto:x" or "javascript:..." would otherwise be read as a host; "localhost:3000" is a port.
  if (!hasScheme && /^[a-z][a-z0-9+.-]*:(?!\d)/i.test(text)) return null;
  const withScheme = hasScheme ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.hostname === '') return null;
  return url.href;
}
