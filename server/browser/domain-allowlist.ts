// The hard allow-list a device's page may load from. Pure logic, so the rule is unit
// tested without a browser; page-driver.ts enforces it through request interception.

/** Schemes that reach the network and are therefore checked against the list. */
const NETWORK_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:']);

/**
 * Schemes that never leave the browser (inline data, blank pages, in-memory blobs) and
 * are always allowed. Every other scheme (file:, chrome:, ftp:, ...) is refused while a
 * list is active, since it could reach local files or browser internals.
 */
const LOCAL_SCHEMES = new Set(['data:', 'about:', 'blob:']);

/**
 * Turns one configured entry into a bare lowercase hostname, or null when nothing usable
 * is left. Entries are meant to be bare hosts ("example.com"), but operators paste URLs,
 * so the rule is: trim; drop a scheme ("https://"), userinfo, port, path, query and
 * fragment; drop a leading "*." or "." (an entry already covers its subdomains); drop a
 * trailing dot; lowercase and punycode through the WHATWG URL parser. Ports are never
 * part of the rule: "localhost:3000" allows localhost on any port.
 */
export function normalizeDomainEntry(entry: string): string | null {
  let text = entry.trim();
  if (text === '') return null;
  if (!text.includes('://')) text = `http://${text}`;
  let hostname: string;
  try {
    hostname = new URL(text).hostname;
  } catch {
    return null;
  }
  hostname = hostname.toLowerCase().replace(/^(\*\.|\.)+/, '').replace(/\.+$/, '');
  if (hostname === '' || hostname.includes('*')) return null;
  return hostname;
}

export class DomainAllowList {
  private constructor(private readonly domains: ReadonlySet<string>) {}

  /**
   * null for "unrestricted" (null or [] as the contract says). A non-empty list whose
   * entries are all unusable stays a list that allows nothing: dropping bad entries
   * must never widen access to everything.
   */
  static fromEntries(entries: readonly string[] | null): DomainAllowList | null {
    if (entries === null || entries.length === 0) return null;
    const domains = new Set<string>();
    for (const entry of entries) {
      const domain = normalizeDomainEntry(entry);
      if (domain !== null) domains.add(domain);
    }
    return new DomainAllowList(domains);
  }

  /** A host is allowed when it equals an entry or is a subdomain of one. */
  allowsHost(hostname: string): boolean {
    const host = hostname.toLowerCase().replace(/\.+$/, '');
    for (const domain of this.domains) {
      if (host === domain || host.endsWith(`.${domain}`)) return true;
    }
    return false;
  }

  allowsUrl(url: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (LOCAL_SCHEMES.has(parsed.protocol)) return true;
    if (!NETWORK_SCHEMES.has(parsed.protocol)) return false;
    return this.allowsHost(parsed.hostname);
  }
}
