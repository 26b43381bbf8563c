import { TRPCError } from '@trpc/server';
import { ApiError } from '../errors';

interface ValidationIssue {
  path: PropertyKey[];
  code: string;
  message: string;
}

function validationIssues(cause: unknown): ValidationIssue[] | null {
  if (typeof cause !== 'object' || cause === null || !('issues' in cause)) return null;
  const issues = (cause as { issues: unknown }).issues;
  return Array.isArray(issues) ? (issues as ValidationIssue[]) : null;
}

/**
 * Maps whatever a procedure threw to the ApiError the client sees. Input validation
 * failures become invalid_request naming the field; anything unexpected is an
 * internal_error whose details stay in the log.
 */
export function toApiError(error: unknown): { apiError: ApiError; unexpected: boolean } {
  if (error instanceof ApiError) return { apiError: error, unexpected: false };
  if (error instanceof TRPCError && error.cause instanceof ApiError) return { apiError: error.cause, unexpected: false };
  if (error instanceof TRPCError) {
    const issues = validationIssues(error.cause);
    if (error.code === 'BAD_REQUEST' && issues !== null) return { apiError: fromIssues(issues), unexpected: false };
    if (error.code === 'PARSE_ERROR') return { apiError: new ApiError('invalid_request'), unexpected: false };
    if (error.code === 'PAYLOAD_TOO_LARGE') return { apiError: new ApiError('payload_too_large'), unexpected: false };
    if (error.code === 'UNSUPPORTED_MEDIA_TYPE') return { apiError: new ApiError('unsupported_media_type'), unexpected: false };
  }
  return { apiError: new ApiError('internal_error'), unexpected: true };
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
