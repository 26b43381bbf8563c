import { describe, expect, it } from 'vitest';
import { checkDestination, classifyAddress, type ResolvedAddress, type Resolver } from './destination';

// Only checks happen here: nothing in this file sends traffic anywhere.
function fixedResolver(answers: ResolvedAddress[]): Resolver {
  return async () => answers;
}

describe('classifyAddress', () => {
  it.each([
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['2606:2800:220:1:248:1893:25c8:1946', 'public'],
    ['127.0.0.1', 'private'],
    ['127.255.0.9', 'private'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.10.10', 'private'],
    ['0.0.0.0', 'private'],
    ['255.255.255.255', 'private'],
    ['224.0.0.1', 'private'],
    ['192.0.2.1', 'private'],
    ['240.0.0.1', 'private'],
    ['::1', 'private'],
    ['::', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'private'],
    ['ff02::1', 'private'],
    ['2001:db8::1', 'private'],
    ['::ffff:127.0.0.1', 'private'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:93.184.216.34', 'public'],
    ['::127.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::5db8:d822', 'public'],
    ['64:ff9b:1::5db8:d822', 'private'],
    ['2002:7f00:1::1', 'private'],
    ['2002:c0a8:101::1', 'private'],
    ['2002:5db8:d822::1', 'public'],
    // Teredo: server 65.54.227.120, client 127.0.0.1 obfuscated (xor ffff:ffff) as 80ff:fffe.
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['not-an-ip', 'private'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

describe('checkDestination', () => {
  it.each([
    'http://127.0.0.1/hook',
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]:8080/hook',
    'http://100.64.0.1/',
    'http://[::ffff:127.0.0.1]/',
    'https://[fd00:ec2::254]/',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://0.0.0.0:3000/',
  ])('refuses %s when private destinations are not allowed', async (url) => {
    expect(await checkDestination(url, { allowPrivate: false })).toEqual({ ok: false, reason: 'blocked_address' });
  });

  it('refuses http://localhost, which the system resolves to loopback', async () => {
    expect(await checkDestination('http://localhost:3000/hook', { allowPrivate: false })).toEqual({
      ok: false,
      reason: 'blocked_address',
    });
  });

  it('passes a public literal and returns the address it judged', async () => {
    const check = await checkDestination('http://93.184.216.34/hook', { allowPrivate: false });
    expect(check).toMatchObject({ ok: true, addresses: [{ address: '93.184.216.34', family: 4 }] });
    const v6 = await checkDestination('https://[2606:2800:220:1:248:1893:25c8:1946]/', { allowPrivate: false });
    expect(v6).toMatchObject({ ok: true, addresses: [{ address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }] });
  });

  it('passes a name whose every answer is public', async () => {
    const resolve = fixedResolver([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    const check = await checkDestination('https://hooks.example.com/x', { allowPrivate: false, resolve });
    expect(check).toMatchObject({ ok: true, addresses: await resolve('hooks.example.com') });
  });

  it('refuses a name when any one answer is private', async () => {
    const resolve = fixedResolver([
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ]);
    expect(await checkDestination('https://mixed.example.com/', { allowPrivate: false, resolve })).toEqual({
      ok: false,
      reason: 'blocked_address',
    });
  });

  it('lets loopback and private addresses through when allowed, but never metadata', async () => {
    for (const url of ['http://127.0.0.1:4000/', 'http://[::1]/', 'http://10.0.0.1/', 'http://localhost/']) {
      expect(await checkDestination(url, { allowPrivate: true }), url).toMatchObject({ ok: true });
    }
    for (const url of ['http://169.254.169.254/', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/']) {
      expect(await checkDestination(url, { allowPrivate: true }), url).toEqual({ ok: false, reason: 'blocked_address' });
    }
  });

  it('refuses other schemes, credentials and unparsable URLs', async () => {
    const opts = { allowPrivate: true };
    expect(await checkDestination('ftp://93.184.216.34/', opts)).toEqual({ ok: false, reason: 'unsupported_scheme' });
    expect(await checkDestination('file:///etc/passwd', opts)).toEqual({ ok: false, reason: 'unsupported_scheme' });
    expect(await checkDestination('https://user:pw@93.184.216.34/', opts)).toEqual({
      ok: false,
      reason: 'credentials_in_url',
    });
    expect(await checkDestination('https://user@93.184.216.34/', opts)).toEqual({
      ok: false,
      reason: 'credentials_in_url',
    });
    expect(await checkDestination('not a url', opts)).toEqual({ ok: false, reason: 'invalid_url' });
  });

  it('reports a name that does not resolve', async () => {
    expect(await checkDestination('http://nonexistent.invalid/', { allowPrivate: true })).toEqual({
      ok: false,
      reason: 'dns_failure',
    });
    const empty = fixedResolver([]);
    expect(await checkDestination('http://empty.test/', { allowPrivate: true, resolve: empty })).toEqual({
      ok: false,
      reason: 'dns_failure',
    });
  });
});
