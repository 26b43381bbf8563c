import { parse } from 'tldts-icann';

/**
 * The site a host belongs to, as a credential's domains name it: its registrable domain
 * by ICANN's section of the Public Suffix List (`login.example.co.uk` → `example.co.uk`);
 * an IPv4 address or a single-label host (`localhost`, an intranet name) is its own site,
 * as browsers count sites; a public suffix (`co.uk`) or anything else has none (null).
 */
export function registrableDomainOf(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === '') return null;
  const parsed = parse(host);
  if (parsed.isIp === true) return host.includes(':') ? null : host;
  if (!host.includes('.')) return host;
  return parsed.domain;
}

/**
 * A credential's domain as given, normalised (lower case, punycode, no trailing dot), or
 * null when it is not a site of its own: `example.com` and `example.co.uk` are,
 * `login.example.com` (a subdomain), `co.uk` (a public suffix) and URLs are not.
 */
export function normalizeRegistrableDomain(entry: string): string | null {
  const text = entry.trim();
  // A port, a path, userinfo or a scheme make it a URL, not a domain.
  if (text === '' || /[/:@?#\s[\]]/.test(text)) return null;
  let host: string;
  try {
    host = new URL(`http://${text}`).hostname.replace(/\.$/, '');
  } catch {
    return null;
  }
  return host !== '' && registrableDomainOf(host) === host ? host : null;
}

/**
 * The phishing guard: whether a page at `pageUrl` may receive a credential of `domains`.
 * Only http(s) pages qualify, and only when the page host's registrable domain is one of
 * them (a subdomain of a credential's domain is covered; a look-alike domain is not).
 */
export function pageMatchesDomains(pageUrl: string, domains: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(pageUrl);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  const site = registrableDomainOf(url.hostname);
  return site !== null && domains.includes(site);
}
