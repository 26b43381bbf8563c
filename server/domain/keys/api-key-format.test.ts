import { describe, expect, it } from 'vitest';
import { hashSecret, secretMatches } from '../secret-hash';
import { formatApiKey, generateKeyId, generateSecret, maskApiKey, parseApiKey } from './api-key-format';

describe('API key format', () => {
  it('generates keys in the CONTRACT.md shape that parse back', () => {
    for (let i = 0; i < 200; i += 1) {
      const keyId = generateKeyId();
      const secret = generateSecret();
      expect(keyId).toMatch(/^[a-z2-7]{12}$/);
      expect(secret).toMatch(/^[A-Za-z0-9-]{43}$/);
      const key = formatApiKey('live', keyId, secret);
      expect(parseApiKey(key)).toEqual({ env: 'live', keyId, secret });
    }
  });

  it('rejects anything that is not exactly the format', () => {
    const good = formatApiKey('test', generateKeyId(), generateSecret());
    for (const bad of ['', good.replace('svc_', 'xyz_'), good.replace('_test_', '_prod_'), `${good}x`, good.slice(0, -1), good.replace(/_([a-z2-7]{12})_/, '_ABCDEFGHIJKL_')]) {
      expect(parseApiKey(bad)).toBeNull();
    }
  });

  it('stores only a hash and compares it against the secret', () => {
    const secret = generateSecret();
    const stored = hashSecret(secret);
    expect(stored).not.toContain(secret);
    expect(secretMatches(secret, stored)).toBe(true);
    expect(secretMatches(generateSecret(), stored)).toBe(false);
    expect(secretMatches(secret, 'abcd')).toBe(false);
  });

  it('masks the secret for logs', () => {
    expect(maskApiKey('test', 'abcdefghijkl')).toBe('svc_operator_test_abcdefghijkl_****');
  });
});
