import { describe, expect, it } from 'vitest';
import { base32 } from '../../../test/support/login-pages';
import { decodeBase32, parseTotp, totpCode, type TotpParameters } from './totp';

// RFC 6238 appendix B: the seeds are the ASCII strings below, 8 digits, 30 s.
const SEEDS = {
  SHA1: '12345678901234567890',
  SHA256: '12345678901234567890123456789012',
  SHA512: '1234567890123456789012345678901234567890123456789012345678901234',
} as const;
const VECTORS: Array<[number, string, string, string]> = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it('matches the RFC 6238 test vectors for SHA-1, SHA-256 and SHA-512', () => {
    for (const [time, sha1, sha256, sha512] of VECTORS) {
      for (const [algorithm, expected] of [['SHA1', sha1], ['SHA256', sha256], ['SHA512', sha512]] as const) {
        const parameters: TotpParameters = { secret: base32(Buffer.from(SEEDS[algorithm])), algorithm, digits: 8, period: 30 };
        expect(totpCode(parameters, time * 1000)).toBe(expected);
      }
    }
  });

  it('decodes base32 in any case, with spaces and padding', () => {
    expect(decodeBase32('gezd gnbv gy3t qojq======')).toEqual(Buffer.from('1234567890'));
    expect(decodeBase32('not base32!')).toBeNull();
  });

  it('reads otpauth:// URIs, the request fields winning over the URI', () => {
    const uri = `otpauth://totp/Bank:alice?secret=${base32(Buffer.from(SEEDS.SHA256))}&algorithm=SHA256&digits=8&period=60&issuer=Bank`;
    expect(parseTotp({ secret: uri })).toEqual({ secret: base32(Buffer.from(SEEDS.SHA256)), algorithm: 'SHA256', digits: 8, period: 60 });
    expect(parseTotp({ secret: uri, digits: 6 })).toMatchObject({ digits: 6 });
    expect(parseTotp({ secret: 'otpauth://hotp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=1' })).toMatchObject({ param: 'totp_secret' });
  });

  it('names the field at fault', () => {
    expect(parseTotp({ secret: 'AAAA' })).toMatchObject({ param: 'totp_secret' });
    expect(parseTotp({ secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', algorithm: 'MD5' })).toMatchObject({ param: 'totp_algorithm' });
    expect(parseTotp({ secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', digits: 4 })).toMatchObject({ param: 'totp_digits' });
    expect(parseTotp({ secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', period: 1 })).toMatchObject({ param: 'totp_period' });
    expect(parseTotp({ secret: 'gezdgnbvgy3tqojq gezdgnbvgy3tqojq' })).toEqual({ secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', algorithm: 'SHA1', digits: 6, period: 30 });
  });
});
