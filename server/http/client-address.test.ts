import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress, TrustedProxies } from './client-address';

function request(peer: string, forwardedFor?: string): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } } as unknown as IncomingMessage;
}

describe('clientAddress', () => {
  it('is the TCP peer, X-Forwarded-For ignored, when no proxy is trusted', () => {
    const none = new TrustedProxies([]);
    expect(clientAddress(request('203.0.113.7', '198.51.100.1'), none)).toBe('203.0.113.7');
    expect(clientAddress(request('::ffff:203.0.113.7'), none)).toBe('203.0.113.7');
    expect(clientAddress(request('2001:db8::1'), none)).toBe('2001:db8::1');
  });

  it('behind trusted proxies, is the right-most forwarded hop that is not a trusted proxy', () => {
    const proxies = new TrustedProxies(['10.0.0.0/8', '192.0.2.10']);
    // The client wrote the left entries; the proxies appended the right ones.
    expect(clientAddress(request('10.1.2.3', '6.6.6.6, 203.0.113.7'), proxies)).toBe('203.0.113.7');
    expect(clientAddress(request('10.1.2.3', '6.6.6.6, 203.0.113.7, 192.0.2.10'), proxies)).toBe('203.0.113.7');
    expect(clientAddress(request('10.1.2.3'), proxies)).toBe('10.1.2.3');
    // A peer that is no trusted proxy is the client, whatever it forwards.
    expect(clientAddress(request('203.0.113.9', '6.6.6.6'), proxies)).toBe('203.0.113.9');
  });

  it('never takes a malformed forwarded entry for the client', () => {
    const proxies = new TrustedProxies(['10.0.0.0/8']);
    expect(clientAddress(request('10.1.2.3', 'garbage'), proxies)).toBe('10.1.2.3');
    expect(clientAddress(request('10.1.2.3', '203.0.113.7, not-an-ip, 10.9.9.9'), proxies)).toBe('10.9.9.9');
  });
});
