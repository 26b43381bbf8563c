import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/**
 * The `X-Service-Signature` value for one delivery attempt: `t=<unix>,v1=<hex>`.
 *
 * The HMAC key is the secret string exactly as the create response returned it, `whsec_`
 * prefix included, so a receiver can paste it into any HMAC library without decoding it.
 * The MAC covers `<t>.` followed by the raw body bytes; binding the timestamp into the MAC
 * is what lets receivers refuse replays outside their tolerance window.
 */
export function signPayload(secret: string, rawBody: string | Buffer, unixSeconds: number): string {
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) {
    throw new RangeError('unixSeconds must be a non-negative integer');
  }
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.`).update(rawBody).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** A fresh endpoint secret: `whsec_` plus 32 random bytes in base64url (43 characters). */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}
