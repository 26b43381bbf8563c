import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/**
 * The reverse proxies (addresses or CIDR ranges, as OPERATOR_TRUSTED_PROXIES lists them)
 * whose `X-Forwarded-For` is believed. With none, the peer of the TCP connection is the
 * client and the header is ignored: anyone can write it.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address = '', prefix] = entry.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(prefix), type);
    }
    this.empty = entries.length === 0;
  }

  includes(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/**
 * The address a request comes from, for limits kept per client. Behind trusted proxies it
 * is the right-most `X-Forwarded-For` entry that is not itself a trusted proxy: entries to
 * the left of it were written by the client and prove nothing. IPv4-mapped IPv6 addresses
 * (`::ffff:10.0.0.1`) are given as IPv4.
 */
export function clientAddress(req: IncomingMessage, proxies: TrustedProxies): string {
  const peer = unmapped(req.socket.remoteAddress ?? 'unknown');
  if (proxies.empty || !proxies.includes(peer)) return peer;
  const forwarded = [req.headers['x-forwarded-for'] ?? []]
    .flat()
    .join(',')
    .split(',')
    .map((entry) => unmapped(entry.trim()));
  for (let index = forwarded.length - 1; index >= 0; index -= 1) {
    const hop = forwarded[index]!;
    // A malformed entry means the chain cannot be trusted past this point.
    if (isIP(hop) === 0) return forwarded[index + 1] ?? peer;
    if (!proxies.includes(hop)) return hop;
  }
  return forwarded[0] ?? peer;
}

function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
