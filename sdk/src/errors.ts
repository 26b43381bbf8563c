/** The error body of every 4xx/5xx answer of the service. */
export interface ErrorBody {
  error: { code: string; message: string; request_id: string; param?: string };
}

/**
 * Any error answer of the service, with its `code` (e.g. `device_busy`), HTTP `status`
 * and `request_id` (quote it to support). Subclasses group the statuses; switch on `code`
 * for the exact cause.
 */
export class OperatorError extends Error {
  override readonly name: string = 'OperatorError';
  readonly code: string;
  readonly status: number;
  readonly request_id: string | null;
  /** The offending input field, on input errors. */
  readonly param: string | undefined;
  /** Seconds the service asked to wait (429/503), if it said. */
  readonly retryAfter: number | undefined;

  constructor(init: { code: string; message: string; status: number; request_id: string | null; param?: string; retryAfter?: number }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.request_id = init.request_id;
    this.param = init.param;
    this.retryAfter = init.retryAfter;
  }
}

/** 400, 413, 415: the request is invalid (`param` names the field when there is one). */
export class InvalidRequestError extends OperatorError {
  override readonly name = 'InvalidRequestError';
}
/** 401: the API key is missing, unknown or revoked. */
export class AuthenticationError extends OperatorError {
  override readonly name = 'AuthenticationError';
}
/** 403: missing scope or Space, no entitlement, or a quota reached. */
export class PermissionDeniedError extends OperatorError {
  override readonly name = 'PermissionDeniedError';
}
/** 404: no such resource (another organization's ids look absent too). */
export class NotFoundError extends OperatorError {
  override readonly name = 'NotFoundError';
}
/** 409 and 410: the resource is not in a state that allows the request. */
export class ConflictError extends OperatorError {
  override readonly name = 'ConflictError';
}
/** 429: too many requests; retried automatically before it reaches you. */
export class RateLimitError extends OperatorError {
  override readonly name = 'RateLimitError';
}
/** 5xx: the service could not answer; 503 is retried automatically. */
export class ServiceError extends OperatorError {
  override readonly name = 'ServiceError';
}
/** The service could not be reached, or the connection broke. */
export class ConnectionError extends OperatorError {
  override readonly name = 'ConnectionError';
}

function classFor(status: number): typeof OperatorError {
  if (status === 400 || status === 413 || status === 415) return InvalidRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409 || status === 410) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServiceError;
  return OperatorError;
}

/** Seconds of a `Retry-After` header (delta-seconds or an HTTP date), if present. */
export function retryAfterSeconds(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** The typed error of a non-2xx response and its (already read) body. */
export function errorFromResponse(response: Response, body: unknown): OperatorError {
  const parsed = (body as Partial<ErrorBody> | null | undefined)?.error;
  const Class = classFor(response.status);
  return new Class({
    code: typeof parsed?.code === 'string' ? parsed.code : `http_${response.status}`,
    message: typeof parsed?.message === 'string' ? parsed.message : `The service answered HTTP ${response.status}.`,
    status: response.status,
    request_id: typeof parsed?.request_id === 'string' ? parsed.request_id : response.headers.get('x-request-id'),
    param: typeof parsed?.param === 'string' ? parsed.param : undefined,
    retryAfter: retryAfterSeconds(response),
  });
}

export function connectionError(cause: unknown): ConnectionError {
  const error = new ConnectionError({ code: 'connection_error', message: 'Could not reach the service.', status: 0, request_id: null });
  (error as { cause?: unknown }).cause = cause;
  return error;
}
