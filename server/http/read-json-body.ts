import type { IncomingMessage } from 'node:http';
import { ApiError } from '../core/errors';
import { readBody } from './read-body';

export type BodyReadResult = { ok: true; body: Record<string, unknown> } | { ok: false; error: ApiError };

/**
 * Reads a JSON request body with the CONTRACT.md rules: no body is an empty object, a
 * body over 1 MiB is 413, a body that is not declared as JSON is 415, anything but a
 * JSON object is 400, and so is a request that ended before its body did. Never throws;
 * the caller decides when to report the error.
 */
export async function readJsonBody(req: IncomingMessage): Promise<BodyReadResult> {
  let bytes: Buffer | null;
  try {
    bytes = await readBody(req);
  } catch (error) {
    // The request ended before its body did (readBody's one refusal).
    if (error instanceof ApiError) return { ok: false, error };
    throw error;
  }
  if (bytes === null) return { ok: false, error: new ApiError('payload_too_large') };
  const raw = bytes.toString('utf8');
  if (raw.trim() === '') return { ok: true, body: {} };

  const contentType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') return { ok: false, error: new ApiError('unsupported_media_type') };

  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, error: new ApiError('invalid_request', { message: 'The request body is not valid JSON.' }) };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, error: new ApiError('invalid_request', { message: 'The request body must be a JSON object.' }) };
  }
  return { ok: true, body: parsed as Record<string, unknown> };
}
