// Receiver-side verification of Browser Device Operator webhooks, and of escalation
// deliveries, which are signed the same way with the organization's escalation signing
// secret.
//
// This file is published as `@browser-device-operator/sdk` (`webhooks.verify()`, and the
// `./verify-webhook` export); customers may also copy it
// into their own code, so it depends on nothing but node:crypto and keeps its own types.

import { createHmac, timingSafeEqual } from 'node:crypto';

/** The signed body of every delivery. `data.object` is the resource as the API returns it. */
export interface WebhookEnvelope {
  id: string;
  object: 'event';
  type: string;
  created_at: string;
  api_version: string;
  org_id: string;
  space_id: string | null;
  data: { object: Record<string, unknown> };
}

/**
 * The signed body of an escalation delivery, POSTed to the organization's escalation URL.
 * `escalation` is the Escalation as the API returns it; answer with
 * `POST resolve_url` and `Authorization: Bearer <token>`.
 */
export interface EscalationDelivery {
  escalation: { id: string } & Record<string, unknown>;
  resolve_url: string;
  token: string;
  /** The one-time page where a person watches, takes over and answers (its secret is the fragment). */
  answer_url: string;
}

export type WebhookVerificationReason =
  | 'missing_header'
  | 'malformed_header'
  | 'signature_mismatch'
  | 'timestamp_out_of_tolerance'
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(readonly reason: WebhookVerificationReason) {
    super(`webhook verification failed: ${reason}`);
  }
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance between `t` and now, in either direction. Default 300. */
  toleranceSecs?: number;
  /** The current time; defaults to the clock. Useful in tests. */
  now?: Date;
  /**
   * What the body must be: `event` (default), a webhook event envelope; `escalation`, an
   * escalation delivery. Anything else is `invalid_payload`.
   */
  delivery?: 'event' | 'escalation';
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const UNIX_SECONDS = /^\d{1,15}$/;

interface ParsedHeader {
  timestamp: number;
  signatures: Buffer[];
}

/**
 * Parses `t=<unix>,v1=<hex>[,v1=<hex>...]`. Pairs may come in any order and unknown schemes
 * are ignored, so the service can add a scheme or send two v1 values while rotating secrets
 * without breaking receivers that still run this version.
 */
function parseSignatureHeader(header: string): ParsedHeader {
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !UNIX_SECONDS.test(value)) {
        throw new WebhookVerificationError('malformed_header');
      }
      timestamp = Number(value);
    } else if (key === 'v1' && HEX_SHA256.test(value)) {
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new WebhookVerificationError('malformed_header');
  }
  return { timestamp, signatures };
}

function isEnvelope(value: unknown): value is WebhookEnvelope {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.id === 'string' && typeof candidate.created_at === 'string';
}

function isEscalationDelivery(value: unknown): value is EscalationDelivery {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  const escalation = candidate.escalation as Record<string, unknown> | null | undefined;
  return (
    typeof escalation === 'object' &&
    escalation !== null &&
    typeof escalation.id === 'string' &&
    typeof candidate.resolve_url === 'string' &&
    typeof candidate.token === 'string'
  );
}

/**
 * Verifies one delivery and returns its body: the event envelope of a webhook, or with
 * `{ delivery: 'escalation' }` (and the organization's escalation signing secret) the body
 * of an escalation delivery.
 *
 * Pass the body exactly as received (a Buffer from the request stream, or the same bytes as a
 * UTF-8 string), never JSON that was parsed and serialized again: the MAC covers raw bytes.
 * Deduplicate on the returned envelope `id` (an escalation's `escalation.id`); the
 * `X-Service-Delivery` header is not signed.
 *
 * @throws WebhookVerificationError with a `reason` a handler can log; answer 400 on it.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  header: string | undefined,
  secret: string,
  options?: VerifyWebhookOptions & { delivery?: 'event' },
): WebhookEnvelope;
export function verifyWebhook(
  rawBody: string | Buffer,
  header: string | undefined,
  secret: string,
  options: VerifyWebhookOptions & { delivery: 'escalation' },
): EscalationDelivery;
export function verifyWebhook(
  rawBody: string | Buffer,
  header: string | undefined,
  secret: string,
  { toleranceSecs = 300, now = new Date(), delivery = 'event' }: VerifyWebhookOptions = {},
): WebhookEnvelope | EscalationDelivery {
  if (header === undefined || header.trim() === '') {
    throw new WebhookVerificationError('missing_header');
  }
  const { timestamp, signatures } = parseSignatureHeader(header);
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;

  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
  const matches = signatures.some(
    (candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected),
  );
  if (!matches) throw new WebhookVerificationError('signature_mismatch');

  // Checked after the MAC so the timestamp compared is one the service actually signed.
  const nowSecs = Math.floor(now.getTime() / 1000);
  if (Math.abs(nowSecs - timestamp) > toleranceSecs) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance');
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('invalid_payload');
  }
  if (delivery === 'escalation' ? !isEscalationDelivery(parsed) : !isEnvelope(parsed)) {
    throw new WebhookVerificationError('invalid_payload');
  }
  return parsed as WebhookEnvelope | EscalationDelivery;
}
