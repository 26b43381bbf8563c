import { isDatabaseUnreachable } from './database-unreachable';

// Every error code a client can see (CONTRACT.md), its HTTP status and its default
// one-sentence message. `satisfies` makes a new code without a row a type error.
const ERROR_TABLE = {
  invalid_request: { status: 400, message: 'The request is invalid.' },
  invalid_cursor: { status: 400, message: 'The cursor is not valid for this list.' },
  unknown_event_type: { status: 400, message: 'The event type is not in the published catalogue.' },
  invalid_api_key: { status: 401, message: 'The API key is missing, malformed, unknown or revoked.' },
  invalid_escalation_token: { status: 401, message: 'The escalation bearer token is missing or invalid.' },
  invalid_session_token: { status: 401, message: 'The session token is missing or invalid.' },
  invalid_metrics_token: { status: 401, message: 'The metrics bearer token is missing or invalid.' },
  insufficient_scope: { status: 403, message: 'The API key lacks the scope or Space this request needs.' },
  product_not_entitled: { status: 403, message: 'The organization is not entitled to this product.' },
  device_quota_exceeded: { status: 403, message: 'The organization has reached its device-count quota.' },
  duration_quota_exceeded: { status: 403, message: 'The organization has used its rolling 24-hour device-duration quota.' },
  not_found: { status: 404, message: 'No such route.' },
  device_not_found: { status: 404, message: 'No such device.' },
  task_not_found: { status: 404, message: 'No such task.' },
  session_not_found: { status: 404, message: 'No such session.' },
  cdp_session_not_found: { status: 404, message: 'No such CDP session.' },
  webhook_endpoint_not_found: { status: 404, message: 'No such webhook endpoint.' },
  escalation_not_found: { status: 404, message: 'No such escalation.' },
  recording_not_found: { status: 404, message: 'No finished recording exists for this task or session yet.' },
  screenshot_not_found: { status: 404, message: 'This step has no screenshot.' },
  file_not_found: { status: 404, message: 'No such file.' },
  task_cache_not_found: { status: 404, message: 'No such task cache entry.' },
  credential_not_found: { status: 404, message: 'No such credential.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this route.' },
  device_busy: { status: 409, message: "The device's task slot is held by another task." },
  device_not_ready: { status: 409, message: 'The device is not active.' },
  idempotency_conflict: { status: 409, message: 'The Idempotency-Key was already used with a different request body.' },
  task_not_cancelable: { status: 409, message: 'The task has already finished.' },
  session_not_control: { status: 409, message: 'The session is watch-only.' },
  no_running_task: { status: 409, message: 'The device has no running task.' },
  credential_name_taken: { status: 409, message: 'The Space already holds a credential of that name.' },
  device_terminated: { status: 410, message: 'The device is terminated.' },
  session_expired: { status: 410, message: 'The session is revoked or expired.' },
  payload_too_large: { status: 413, message: 'The request body is larger than 1 MiB.' },
  range_not_satisfiable: { status: 416, message: 'The Range does not overlap the content.' },
  unsupported_media_type: { status: 415, message: 'The request body must be JSON (Content-Type: application/json).' },
  rate_limited: { status: 429, message: 'Too many requests; retry after the time given in Retry-After.' },
  too_many_streams: { status: 429, message: 'This API key has as many task event streams open as it may; close one, or retry after the time given in Retry-After.' },
  too_many_sockets: { status: 429, message: 'This session has as many live-view sockets open as it may; close one first.' },
  internal_error: { status: 500, message: 'An internal error occurred.' },
  capacity_exhausted: { status: 503, message: 'No browser capacity is free right now; retry after the time given in Retry-After.' },
  service_unavailable: { status: 503, message: 'The service cannot reach its database right now; retry after the time given in Retry-After.' },
  storage_unavailable: { status: 503, message: 'The service cannot reach its object store right now; retry after the time given in Retry-After.' },
  // The operators' own tools, the console and the admin CLI (docs/api.md, "Operator
  // console"). Never an answer of /v1, so its OpenAPI document leaves them out.
  invalid_console_key: { status: 401, message: 'That console key is not valid.', operatorTools: true },
  console_sign_in_required: { status: 401, message: 'Sign in with your console key.', operatorTools: true },
  console_header_required: { status: 403, message: 'Console calls must come from the console.', operatorTools: true },
  organization_not_found: { status: 404, message: 'No such organization.', operatorTools: true },
  api_key_not_found: { status: 404, message: 'No such active API key.', operatorTools: true },
  no_escalation_url: { status: 409, message: 'The organization has no escalation URL to sign deliveries for.', operatorTools: true },
  // The answer page of an escalation's answer_url (docs/api.md, "Answer links").
  invalid_answer_link: { status: 401, message: 'This answer link is not valid.', operatorTools: true },
  answer_link_used: { status: 410, message: 'This answer link was already opened once; ask for a new one.', operatorTools: true },
  escalation_closed: { status: 410, message: 'This escalation is no longer waiting for an answer.', operatorTools: true },
} as const satisfies Record<string, { status: number; message: string; operatorTools?: true }>;

export type ApiErrorCode = keyof typeof ERROR_TABLE;
export type ApiErrorStatus = (typeof ERROR_TABLE)[ApiErrorCode]['status'];

export interface ApiErrorOptions {
  /** Replaces the default message; must be one fixed sentence, never echoing input or secrets. */
  message?: string;
  /** The offending input field, for input errors. */
  param?: string;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error type the service answers with, thrown by the domain and the layers above
 * it. A plain error: the domain knows nothing of tRPC, and server/trpc converts it for
 * tRPC in one place (unwrap-trpc-error.ts, error-shape.ts).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly apiCode: ApiErrorCode;
  readonly status: ApiErrorStatus;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ApiErrorCode, options: ApiErrorOptions = {}) {
    const row = ERROR_TABLE[code];
    super(options.message ?? row.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.apiCode = code;
    this.status = row.status;
    this.param = options.param;
    this.headers = options.headers ?? {};
  }

  toBody(requestId: string) {
    return {
      error: {
        code: this.apiCode,
        message: this.message,
        request_id: requestId,
        ...(this.param === undefined ? {} : { param: this.param }),
      },
    };
  }
}

export function invalidRequest(param: string | undefined, message?: string): ApiError {
  return new ApiError('invalid_request', { param, message });
}

// What a client reading an artifact while the object store is out is told: the store's
// writes are retried from 1 s (storage/retrying-writes.ts), and an outage is seldom shorter.
export const STORAGE_RETRY_AFTER_SECS = 5;

/**
 * The object store could not answer a read (unreachable, or an error of its own), which
 * is not a missing object: 503 storage_unavailable, never the store's own words.
 */
export class StorageUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the object store could not be read', { cause });
    this.name = 'StorageUnavailableError';
  }
}

// What a client waiting out a database outage is told: about twice the time the service
// takes to notice the database is back (database-availability.ts probes every second).
export const DATABASE_RETRY_AFTER_SECS = 2;

/**
 * What a client is shown for anything thrown: an ApiError as it is; a database that could
 * not be reached is 503 service_unavailable, expected and logged once elsewhere
 * (database-availability.ts); an object store that could not be read, 503
 * storage_unavailable (its writes are logged as they retry); anything else is the fixed internal_error, and `unexpected`
 * tells the caller to log the original.
 */
export function asApiError(error: unknown): { apiError: ApiError; unexpected: boolean } {
  if (error instanceof ApiError) return { apiError: error, unexpected: false };
  if (isDatabaseUnreachable(error)) return { apiError: serviceUnavailable(), unexpected: false };
  if (error instanceof StorageUnavailableError) return { apiError: new ApiError('storage_unavailable', { headers: { 'Retry-After': String(STORAGE_RETRY_AFTER_SECS) } }), unexpected: false };
  return { apiError: new ApiError('internal_error'), unexpected: true };
}

export function serviceUnavailable(): ApiError {
  return new ApiError('service_unavailable', { headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECS) } });
}

/** The codes /v1 answers with: the enum of its OpenAPI document's error body. */
export const apiErrorCodes = (Object.keys(ERROR_TABLE) as ApiErrorCode[]).filter((code) => !('operatorTools' in ERROR_TABLE[code]));
