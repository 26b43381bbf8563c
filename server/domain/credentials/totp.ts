import { createHmac } from 'node:crypto';
import { z } from 'zod';

/** What a TOTP code is computed from (RFC 6238), sealed as one JSON document. */
export const TotpParametersSchema = z.object({
  /** The shared secret, base32 without padding, upper case. */
  secret: z.string(),
  algorithm: z.enum(['SHA1', 'SHA256', 'SHA512']),
  digits: z.number().int(),
  period: z.number().int(),
});
export type TotpParameters = z.infer<typeof TotpParametersSchema>;
export type TotpAlgorithm = TotpParameters['algorithm'];

export const TOTP_DEFAULTS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
export const TOTP_DIGITS = { min: 6, max: 10 } as const;
export const TOTP_PERIOD_SECS = { min: 15, max: 300 } as const;

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The bytes of a base32 secret (RFC 4648; case, spaces and padding ignored), or null. */
export function decodeBase32(text: string): Buffer | null {
  const clean = text.replace(/[\s-]/g, '').replace(/=+$/, '').toUpperCase();
  if (clean === '') return null;
  let bits = 0;
  let value = 0;
  const bytes: number[] = [];
  for (const char of clean) {
    const index = BASE32_ALPHABET.indexOf(char);
    if (index === -1) return null;
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** The code for the time `atMs` (RFC 6238: HOTP of the period's counter, RFC 4226 truncation). */
export function totpCode(parameters: TotpParameters, atMs: number): string {
  const key = decodeBase32(parameters.secret);
  if (key === null) throw new Error('the TOTP secret is not base32');
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000 / parameters.period)));
  const digest = createHmac(parameters.algorithm.toLowerCase(), key).update(counter).digest();
  const offset = digest[digest.length - 1]! & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** parameters.digits).padStart(parameters.digits, '0');
}

export type TotpInput = { secret: string; algorithm?: string; digits?: number; period?: number };
export type TotpProblem = { param: string; message: string };

/**
 * The parameters of a `totp_secret` (base32, or an `otpauth://totp/` URI whose query gives
 * secret, algorithm, digits and period) with the request's own `totp_*` fields, which win
 * over the URI's. A problem names the field at fault.
 */
export function parseTotp(input: TotpInput): TotpParameters | TotpProblem {
  let secret = input.secret.trim();
  let fromUri: { algorithm?: string; digits?: number; period?: number } = {};
  if (/^otpauth:/i.test(secret)) {
    let uri: URL;
    try {
      uri = new URL(secret);
    } catch {
      return { param: 'totp_secret', message: 'The totp_secret otpauth:// URI is not a valid URI.' };
    }
    if (uri.host.toLowerCase() !== 'totp') return { param: 'totp_secret', message: 'Only otpauth://totp/ URIs are supported (not hotp).' };
    secret = uri.searchParams.get('secret') ?? '';
    const number = (name: string) => (uri.searchParams.has(name) ? Number(uri.searchParams.get(name)) : undefined);
    fromUri = { algorithm: uri.searchParams.get('algorithm') ?? undefined, digits: number('digits'), period: number('period') };
  }
  const key = decodeBase32(secret);
  if (key === null || key.length < 10) return { param: 'totp_secret', message: 'The totp_secret must be a base32 secret of at least 80 bits, or an otpauth://totp/ URI holding one.' };
  const algorithm = (input.algorithm ?? fromUri.algorithm ?? TOTP_DEFAULTS.algorithm).toUpperCase().replace('-', '');
  if (algorithm !== 'SHA1' && algorithm !== 'SHA256' && algorithm !== 'SHA512') {
    return { param: 'totp_algorithm', message: 'The totp_algorithm must be SHA1, SHA256 or SHA512.' };
  }
  const digits = input.digits ?? fromUri.digits ?? TOTP_DEFAULTS.digits;
  if (!Number.isInteger(digits) || digits < TOTP_DIGITS.min || digits > TOTP_DIGITS.max) {
    return { param: 'totp_digits', message: `The totp_digits must be an integer from ${TOTP_DIGITS.min} to ${TOTP_DIGITS.max}.` };
  }
  const period = input.period ?? fromUri.period ?? TOTP_DEFAULTS.period;
  if (!Number.isInteger(period) || period < TOTP_PERIOD_SECS.min || period > TOTP_PERIOD_SECS.max) {
    return { param: 'totp_period', message: `The totp_period must be an integer from ${TOTP_PERIOD_SECS.min} to ${TOTP_PERIOD_SECS.max} seconds.` };
  }
  const canonical = secret.replace(/[\s-]/g, '').replace(/=+$/, '').toUpperCase();
  return { secret: canonical, algorithm, digits, period };
}
