import { describe, expect, it } from 'vitest';
import { DomainAllowList, normalizeDomainEntry } from './domain-allowlist.js';

describe('normalizeDomainEntry', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Example.COM  ', 'example.com'],
    ['https://example.com/path?q=1', 'example.com'],
    ['example.com:8443', 'example.com'],
    ['*.example.com', 'example.com'],
    ['.example.com', 'example.com'],
    ['example.com.', 'example.com'],
    ['user:pw@example.com', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['127.0.0.1:3000', '127.0.0.1'],
    ['', null],
    ['   ', null],
    ['http://', null],
  ])('%j → %j', (entry, expected) => {
    expect(normalizeDomainEntry(entry)).toBe(expected);
  });
});

describe('DomainAllowList', () => {
  const list = DomainAllowList.fromEntries(['example.com', 'localhost'])!;

  it('allows an entry and its subdomains, case-insensitively, on any port', () => {
    expect(list.allowsHost('example.com')).toBe(true);
    expect(list.allowsHost('WWW.Example.com')).toBe(true);
    expect(list.allowsHost('a.b.example.com')).toBe(true);
    expect(list.allowsHost('example.com.')).toBe(true);
    expect(list.allowsUrl('https://shop.example.com:8443/cart')).toBe(true);
    expect(list.allowsUrl('wss://example.com/socket')).toBe(true);
  });

  it('refuses look-alike hosts that merely end with the same letters', () => {
    expect(list.allowsHost('badexample.com')).toBe(false);
    expect(list.allowsHost('example.com.evil.net')).toBe(false);
    expect(list.allowsHost('com')).toBe(false);
  });

  it('treats localhost and 127.0.0.1 as different hosts', () => {
    expect(list.allowsUrl('http://localhost:3000/')).toBe(true);
    expect(list.allowsUrl('http://127.0.0.1:3000/')).toBe(false);
  });

  it('allows data:, about: and blob: but refuses file: and other schemes', () => {
    expect(list.allowsUrl('about:blank')).toBe(true);
    expect(list.allowsUrl('data:text/html,hi')).toBe(true);
    expect(list.allowsUrl('blob:https://example.com/1234')).toBe(true);
    expect(list.allowsUrl('file:///etc/passwd')).toBe(false);
    expect(list.allowsUrl('chrome://settings')).toBe(false);
    expect(list.allowsUrl('not a url')).toBe(false);
  });

  it('is unrestricted for null or [], and allows nothing when every entry is unusable', () => {
    expect(DomainAllowList.fromEntries(null)).toBeNull();
    expect(DomainAllowList.fromEntries([])).toBeNull();
    const unusable = DomainAllowList.fromEntries(['', 'http://'])!;
    expect(unusable).not.toBeNull();
    expect(unusable.allowsUrl('https://example.com/')).toBe(false);
  });
});
