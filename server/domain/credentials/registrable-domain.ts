import { getDomain } from 'tldts-icann';

/**
 * A credential's domain as given, normalised (lower case, punycode, no trailing dot), or
 * null when it is not a registrable domain: `example.com` and `example.co.uk` are,
 * `login.example.com` (a subdomain), `co.uk` (a public suffix), IP addresses and URLs are
 * not. ICANN's section of the Public Suffix List decides.
 */
export function normalizeRegistrableDomain(entry: string): string | null {
  const text = entry.trim();
  // A port, a path, userinfo or a scheme make it a URL, not a domain.
  if (text === '' || /[/:@?#\s]/.test(text)) return null;
  let host: string;
  try {
    host = new URL(`http://${text}`).hostname.replace(/\.$/, '');
  } catch {
    return null;
  }
  return host !== '' && getDomain(host) === host ? host : null;
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
  const registrable = getDomain(url.hostname.replace(/\.$/, ''));
  return registrable !== null && domains.includes(registrable);
}
