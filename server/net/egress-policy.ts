import { networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { addressesOf, isAllowedAddress, systemResolver, type ResolvedAddress, type Resolver } from './destination';

export interface EgressPolicyOptions {
  /** OPERATOR_ALLOW_PRIVATE_DESTINATIONS: loopback and private networks open (local use, tests). */
  allowPrivate: boolean;
  /**
   * `address:port` pairs opened whatever their class (OPERATOR_TEST_ALLOW_DESTINATIONS):
   * lets a test serve one page on loopback while everything else there stays closed.
   */
  testAllowed?: readonly string[];
  resolve?: Resolver;
  /** Addresses of this machine's own interfaces; injectable for tests. */
  ownAddresses?: () => string[];
}

export type EgressDecision =
  | { ok: true; address: ResolvedAddress }
  | { ok: false; reason: 'blocked_address' | 'dns_failure' | 'invalid_host' };

/**
 * Where a device's browser may connect: public addresses only, by default. The rule is the
 * webhook sender's (server/net/destination.ts: loopback, RFC 1918, link-local, CGNAT, ULA,
 * IPv4 forms hidden in IPv6, metadata services), plus the addresses of this machine's own
 * interfaces, so a public address the service listens on is no way back in. A name is
 * judged on every address it resolves to, and the caller connects to the address returned:
 * resolving again would let a changed DNS answer (rebinding) reach what was just refused.
 */
export class EgressPolicy {
  private readonly allowPrivate: boolean;
  private readonly testAllowed: ReadonlySet<string>;
  private readonly resolve: Resolver;
  private readonly ownAddresses: () => string[];

  constructor(options: EgressPolicyOptions) {
    this.allowPrivate = options.allowPrivate;
    this.testAllowed = new Set((options.testAllowed ?? []).map(normalizeAddressPort).filter((entry) => entry !== null));
    this.resolve = options.resolve ?? systemResolver;
    this.ownAddresses = options.ownAddresses ?? interfaceAddresses;
  }

  async check(hostname: string, port: number): Promise<EgressDecision> {
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    if (host === '' || !Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, reason: 'invalid_host' };

    const addresses = await addressesOf(host, this.resolve);
    if (addresses === null) return { ok: false, reason: 'dns_failure' };
    // All or nothing: one refused answer refuses the name, as with webhooks.
    const own = this.allowPrivate ? new Set<string>() : new Set(this.ownAddresses().map(normalizeAddress));
    const allowed = addresses.every(({ address }) => this.allows(address, port, own));
    return allowed ? { ok: true, address: addresses[0]! } : { ok: false, reason: 'blocked_address' };
  }

  private allows(address: string, port: number, own: ReadonlySet<string>): boolean {
    const normalized = normalizeAddress(address);
    if (this.testAllowed.has(`${normalized}:${port}`)) return true;
    return isAllowedAddress(address, this.allowPrivate) && !own.has(normalized);
  }
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

function normalizeAddress(address: string): string {
  try {
    return ipaddr.process(address.replace(/%.*$/, '')).toNormalizedString();
  } catch {
    return address.toLowerCase();
  }
}

/** "127.0.0.1:8080" or "[::1]:8080" → normalized "address:port"; null when unusable. */
function normalizeAddressPort(entry: string): string | null {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry.trim());
  if (match === null || isIP(match[1]!) === 0) return null;
  return `${normalizeAddress(match[1]!)}:${Number(match[2])}`;
}
