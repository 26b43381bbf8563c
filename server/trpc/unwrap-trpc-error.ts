import { TRPCError } from '@trpc/server';
import { ApiError, type ApiErrorCode } from '../core/errors';

interface ValidationIssue {
  path: PropertyKey[];
  code: string;
  message: string;
}

/**
 * tRPC's own refusals, made before a procedure's resolver ran: input it could not parse
 * or that failed the procedure's schema, and on tRPC's HTTP adapter (the console) an
 * unknown procedure, a wrong method, a body it would not take.
 */
const CODES_OF_TRPC_REFUSALS: Partial<Record<TRPCError['code'], ApiErrorCode>> = {
  PARSE_ERROR: 'invalid_request',
  BAD_REQUEST: 'invalid_request',
  NOT_FOUND: 'not_found',
  METHOD_NOT_SUPPORTED: 'method_not_allowed',
  PAYLOAD_TOO_LARGE: 'payload_too_large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
};

function validationIssues(cause: unknown): ValidationIssue[] | null {
  if (typeof cause !== 'object' || cause === null || !('issues' in cause)) return null;
  const issues = (cause as { issues: unknown }).issues;
  return Array.isArray(issues) ? (issues as ValidationIssue[]) : null;
}

/**
 * What an error tRPC hands over stands for, in the service's own terms. tRPC wraps
 * whatever a procedure or middleware throws in a TRPCError (code INTERNAL_SERVER_ERROR,
 * the thrown error as its cause), so an ApiError comes back out as it was thrown; input
 * that failed a schema becomes invalid_request naming the field; tRPC's other refusals
 * become their codes in the error table. Anything else is returned as it is, for
 * `asApiError` to answer as an internal error. The one place that reads tRPC's errors:
 * the /v1 handler and tRPC's error formatter both go through it.
 */
export function unwrapTrpcError(error: unknown): unknown {
  if (!(error instanceof TRPCError)) return error;
  if (error.cause instanceof ApiError) return error.cause;
  const issues = validationIssues(error.cause);
  if (error.code === 'BAD_REQUEST' && issues !== null) return fromIssues(issues);
  const refusal = CODES_OF_TRPC_REFUSALS[error.code];
  return refusal === undefined ? error : new ApiError(refusal);
}

function fromIssues(issues: ValidationIssue[]): ApiError {
  const issue = issues[0];
  if (issue === undefined) return new ApiError('invalid_request');
  const unknownKeys = issue.code === 'unrecognized_keys' ? (issue as ValidationIssue & { keys?: string[] }).keys : undefined;
  const path = [...issue.path, ...(unknownKeys?.slice(0, 1) ?? [])];
  const param = path.length > 0 ? path.map(String).join('.') : undefined;
  if (unknownKeys !== undefined) return new ApiError('invalid_request', { param, message: `Unknown parameter: ${param}.` });
  // Zod's messages name the expectation ("expected string") and never echo the value.
  const message = param === undefined ? `Invalid request: ${issue.message}.` : `Invalid value for ${param}: ${issue.message}.`;
  return new ApiError('invalid_request', { param, message: message.replace(/\.\.$/, '.') });
}
