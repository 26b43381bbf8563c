import type { TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { asApiError, type ApiErrorCode, type ApiErrorStatus } from '../core/errors';
import { unwrapTrpcError } from './unwrap-trpc-error';

// tRPC's JSON-RPC code for each status of the error table. The status sent is the
// table's own (`data.httpStatus`, which tRPC's HTTP adapter answers with), so a 410 stays
// a 410; this code only keeps tRPC's shape well-formed.
const TRPC_CODE_BY_STATUS = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  410: 'PRECONDITION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  416: 'BAD_REQUEST',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
} as const satisfies Record<ApiErrorStatus, TRPCError['code']>;

/** What a tRPC client reads in `error.data`: the error table's code and status, and the field of an input error. */
export interface ApiErrorData {
  code: ApiErrorCode;
  httpStatus: ApiErrorStatus;
  param?: string;
}

/**
 * tRPC's error formatter: every error tRPC's HTTP adapter answers with (the console's API)
 * leaves as the error table's, with its message, and nothing of tRPC's own shape (stack,
 * path, the message of an unexpected error). The /v1 handler writes the CONTRACT.md body
 * itself from the same conversion.
 */
export function apiErrorShape(error: TRPCError) {
  const { apiError } = asApiError(unwrapTrpcError(error));
  const data: ApiErrorData = { code: apiError.apiCode, httpStatus: apiError.status, ...(apiError.param === undefined ? {} : { param: apiError.param }) };
  return { message: apiError.message, code: TRPC_ERROR_CODES_BY_KEY[TRPC_CODE_BY_STATUS[apiError.status]], data };
}
