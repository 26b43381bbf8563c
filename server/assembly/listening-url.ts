import type { AddressInfo } from 'node:net';

/**
 * The URL of a server listening on `address`: the address itself when it is one (HOST set
 * to the machine's own address, as on a multi-machine deployment), loopback when the
 * server listens on every address (HOST=0.0.0.0 or ::). It is also what the host registers
 * for other instances when OPERATOR_INTERNAL_URL is unset, so it must never be loopback
 * for a server that does not listen there: another machine would relay to its own
 * loopback, and even this machine would reach nothing.
 */
export function listeningUrl(address: AddressInfo): string {
  const unspecified = address.address === '0.0.0.0' || address.address === '::';
  if (address.family === 'IPv6') return `http://[${unspecified ? '::1' : address.address}]:${address.port}`;
  return `http://${unspecified ? '127.0.0.1' : address.address}:${address.port}`;
}
