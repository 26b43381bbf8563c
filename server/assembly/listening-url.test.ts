import { describe, expect, it } from 'vitest';
import { listeningUrl } from './listening-url';

describe('listeningUrl', () => {
  it('is loopback for a server listening on every address', () => {
    expect(listeningUrl({ address: '0.0.0.0', family: 'IPv4', port: 3000 })).toBe('http://127.0.0.1:3000');
    expect(listeningUrl({ address: '::', family: 'IPv6', port: 3000 })).toBe('http://[::1]:3000');
  });

  it('is the address itself for a server listening on one', () => {
    expect(listeningUrl({ address: '10.213.7.5', family: 'IPv4', port: 3000 })).toBe('http://10.213.7.5:3000');
    expect(listeningUrl({ address: '127.0.0.1', family: 'IPv4', port: 3000 })).toBe('http://127.0.0.1:3000');
    expect(listeningUrl({ address: 'fd00::5', family: 'IPv6', port: 3000 })).toBe('http://[fd00::5]:3000');
  });
});
