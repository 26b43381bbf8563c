import { describe, expect, it } from 'vitest';
import { formatApiKey, generateKeyId, generateSecret } from './domain/keys/api-key-format';
import { maskSecrets } from './log';

describe('maskSecrets', () => {
  it('keeps the key id of an API key and hides its secret', () => {
    const keyId = generateKeyId();
    const secret = generateSecret();
    const masked = maskSecrets(`calling with ${formatApiKey('test', keyId, secret)} now`);
    expect(masked).toBe(`calling with svc_operator_test_${keyId}_**** now`);
    expect(masked).not.toContain(secret);
  });

  it('hides webhook secrets', () => {
    expect(maskSecrets('secret whsec_abcDEF123-_xyz')).not.toContain('abcDEF123');
  });

  it('keeps the key id of a console key and hides session tokens, escalation bearers and console sign-ins whole', () => {
    const keyId = generateKeyId();
    const secret = generateSecret();
    expect(maskSecrets(`svc_console_${keyId}_${secret}`)).toBe(`svc_console_${keyId}_****`);
    for (const token of [`sestok_${secret}`, `esctok_${secret}`, `constok_${secret}`, `svc.token.sestok_${secret}`]) {
      expect(maskSecrets(`header ${token} end`)).not.toContain(secret);
    }
  });
});
