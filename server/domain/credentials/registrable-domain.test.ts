import { describe, expect, it } from 'vitest';
import { normalizeRegistrableDomain, pageMatchesDomains } from './registrable-domain';

describe('registrable domains', () => {
  it('accepts registrable domains only, normalised', () => {
    expect(normalizeRegistrableDomain('Example.COM.')).toBe('example.com');
    expect(normalizeRegistrableDomain('example.co.uk')).toBe('example.co.uk');
    expect(normalizeRegistrableDomain('bücher.example')).toBe('xn--bcher-kva.example');
    // An address and a single-label host are sites of their own, as browsers count them.
    expect(normalizeRegistrableDomain('127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeRegistrableDomain('LOCALHOST')).toBe('localhost');
    for (const bad of ['login.example.com', 'co.uk', 'com.au', '[::1]', 'https://example.com', 'example.com:443', 'example.com/x', 'a b.com', '']) {
      expect(normalizeRegistrableDomain(bad), bad).toBeNull();
    }
  });

  it('lets a page of the domain or a subdomain through, and nothing else', () => {
    const domains = ['example.com'];
    expect(pageMatchesDomains('https://example.com/login', domains)).toBe(true);
    expect(pageMatchesDomains('https://accounts.example.com:8443/login', domains)).toBe(true);
    expect(pageMatchesDomains('https://example.com.evil.net/login', domains)).toBe(false);
    expect(pageMatchesDomains('https://evilexample.com/login', domains)).toBe(false);
    expect(pageMatchesDomains('data:text/html,<input>', domains)).toBe(false);
    expect(pageMatchesDomains('about:blank', domains)).toBe(false);
    expect(pageMatchesDomains('http://127.0.0.1:8080/login', ['127.0.0.1'])).toBe(true);
    expect(pageMatchesDomains('http://localhost:8080/login', ['127.0.0.1'])).toBe(false);
  });
});
