import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every A/AAAA answer for a name; injectable so tests can play DNS-rebinding games. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export type DestinationRefusal =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'credentials_in_url'
  | 'dns_failure'
  | 'blocked_address';

export type DestinationCheck =
  | { ok: true; url: URL; addresses: ResolvedAddress[] }
  | { ok: false; reason: DestinationRefusal };

export interface DestinationOptions {
  /** Lets loopback, private, link-local and other non-public addresses through (local use, tests). */
  allowPrivate: boolean;
  resolve?: Resolver;
}

/**
 * `public`: globally routable unicast. `private`: anything else a customer has no business
 * pointing us at (loopback, RFC 1918, ULA, link-local, CGNAT, unspecified, broadcast,
 * multicast, reserved). `metadata`: cloud instance-metadata services, refused even when
 * private destinations are allowed, because no test or local setup needs them and reaching
 * them leaks the host's credentials.
 */
export type AddressClass = 'public' | 'private' | 'metadata';

const METADATA_ADDRESSES = new Set(
  [
    '169.254.169.254', // AWS, GCP, Azure, OpenStack and most others
    '169.254.170.2', // AWS ECS task credentials
    '100.100.100.200', // Alibaba Cloud
    '168.63.129.16', // Azure wire server: a public address, so the range check alone misses it
    'fd00:ec2::254', // AWS IPv6 metadata
  ].map((address) => ipaddr.parse(address).toNormalizedString()),
);

function ipv4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 addresses an IPv6 address carries and that a translator or tunnel would deliver
 * to, so `::ffff:127.0.0.1` or `64:ff9b::a00:1` cannot smuggle a private target past the
 * check. `null` means the address is only a wrapper whose target cannot be trusted.
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return [ipv4FromParts(p[6]!, p[7]!)];
    case 'rfc6052':
      // The well-known NAT64 prefix 64:ff9b::/96 ends in the IPv4 address; the local-use
      // prefix 64:ff9b:1::/48 is site-specific by definition, so it is not public.
      return p[1] === 0xff9b && p[2] === 0 ? [ipv4FromParts(p[6]!, p[7]!)] : null;
    case '6to4': // 2002:wwxx:yyzz::/48
      return [ipv4FromParts(p[1]!, p[2]!)];
    case 'teredo': // 2001:0:<server v4>:<flags>:<port>:<client v4 xor ffff:ffff>
      return [ipv4FromParts(p[2]!, p[3]!), ipv4FromParts(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
    default:
      return [];
  }
}

function isDeprecatedIPv4Compatible(address: ipaddr.IPv6): boolean {
  // ::a.b.c.d (RFC 4291 §2.5.5.1) is not in ipaddr.js's range table and reads as unicast.
  return address.parts.slice(0, 6).every((part) => part === 0);
}

function classifyParsed(address: ipaddr.IPv4 | ipaddr.IPv6): AddressClass {
  if (METADATA_ADDRESSES.has(address.toNormalizedString())) return 'metadata';
  if (address.kind() === 'ipv4') return address.range() === 'unicast' ? 'public' : 'private';

  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded === null) return 'private';
  if (embedded.length > 0) {
    const classes = embedded.map(classifyParsed);
    if (classes.includes('metadata')) return 'metadata';
    return classes.every((c) => c === 'public') ? 'public' : 'private';
  }
  if (isDeprecatedIPv4Compatible(v6)) return 'private';
  return v6.range() === 'unicast' ? 'public' : 'private';
}

/** Classifies one IP literal; anything unparsable is treated as private (fail closed). */
export function classifyAddress(address: string): AddressClass {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return 'private';
  }
  return classifyParsed(parsed);
}

export function isAllowedAddress(address: string, allowPrivate: boolean): boolean {
  const cls = classifyAddress(address);
  return cls === 'public' || (cls === 'private' && allowPrivate);
}

/**
 * The addresses a host stands for: itself when it is an IP literal (without brackets),
 * else every DNS answer; null when the name does not resolve.
 */
export async function addressesOf(host: string, resolve: Resolver): Promise<ResolvedAddress[] | null> {
  const literalFamily = isIP(host);
  if (literalFamily === 4 || literalFamily === 6) return [{ address: host, family: literalFamily }];
  try {
    const addresses = await resolve(host);
    return addresses.length > 0 ? addresses : null;
  } catch {
    return null;
  }
}

export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/**
 * Decides whether a webhook (or escalation) URL may be called, and returns the addresses it
 * was judged on. Delivery must connect to exactly these addresses: resolving the name again
 * would let a DNS answer that changed in between (rebinding) reach a private target.
 *
 * Plain http is allowed alongside https: local receivers and tests use it, and the payload is
 * signed either way. Refusal is all-or-nothing: one disallowed answer refuses the name, since
 * the connection could otherwise land on it.
 */
export async function checkDestination(
  rawUrl: string,
  { allowPrivate, resolve = systemResolver }: DestinationOptions,
): Promise<DestinationCheck> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, reason: 'invalid_url' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, reason: 'unsupported_scheme' };
  }
  // Credentials in a URL end up in logs and in the endpoint record shown to every key holder.
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials_in_url' };

  // The WHATWG parser has already turned 0x7f.1, 2130706433 and friends into dotted decimal.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') return { ok: false, reason: 'invalid_url' };

  const addresses = await addressesOf(host, resolve);
  if (addresses === null) return { ok: false, reason: 'dns_failure' };

  if (!addresses.every(({ address }) => isAllowedAddress(address, allowPrivate))) {
    return { ok: false, reason: 'blocked_address' };
  }
  return { ok: true, url, addresses };
}
