"""The exceptions of the client: one class per group of HTTP statuses, each carrying the
service's error `code` (e.g. `device_busy`), `status`, `request_id` and, on input errors,
`param`. Catch a class, then switch on `code` for the exact cause."""

from __future__ import annotations


class OperatorError(Exception):
    """An error answer of the service (or, with status 0, no answer at all)."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: int,
        request_id: str | None = None,
        param: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        #: Quote it to support: the service's logs and audit events carry it.
        self.request_id = request_id
        #: The offending input field, on input errors.
        self.param = param
        #: Seconds the service asked to wait (429, 503), if it said.
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f", param {self.param}" if self.param else ""
        return f"{self.code} ({self.status}{where}): {self.message} [{self.request_id}]"


class InvalidRequestError(OperatorError):
    """400, 413, 415: the request is invalid (`param` names the field when there is one)."""


class AuthenticationError(OperatorError):
    """401: the API key (or the escalation bearer) is missing, unknown or revoked."""


class PermissionDeniedError(OperatorError):
    """403: missing scope or Space, no entitlement, or a quota reached."""


class NotFoundError(OperatorError):
    """404: no such resource (another organization's ids look absent too)."""


class ConflictError(OperatorError):
    """409 and 410: the resource is not in a state that allows the request."""


class RateLimitError(OperatorError):
    """429: too many requests; retried automatically before it reaches you."""


class ServiceError(OperatorError):
    """5xx: the service could not answer; 503 is retried automatically."""


class OperatorConnectionError(OperatorError):
    """The service could not be reached, or the connection broke (status 0)."""


class RedirectError(OperatorError):
    """A 3xx answer. The client never follows one: that would replay the API key to
    wherever the `Location` points. `location` says where it pointed."""

    def __init__(self, message: str, *, status: int, request_id: str | None, location: str | None) -> None:
        super().__init__(message, code="redirect_not_followed", status=status, request_id=request_id)
        self.location = location


def error_class_for(status: int) -> type[OperatorError]:
    if status in (400, 413, 415):
        return InvalidRequestError
    if status == 401:
        return AuthenticationError
    if status == 403:
        return PermissionDeniedError
    if status == 404:
        return NotFoundError
    if status in (409, 410):
        return ConflictError
    if status == 429:
        return RateLimitError
    if status >= 500:
        return ServiceError
    return OperatorError
