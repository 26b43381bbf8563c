"""The transport rules both clients follow, without any I/O: where the key and the URL come
from, which answers are retried and after how long, which requests get an
`Idempotency-Key`, how an error answer becomes an exception, and how server-sent events are
read. `_async_client.py` (and the `_sync_client.py` generated from it) only do the I/O."""

from __future__ import annotations

import email.utils
import enum
import json
import os
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

from .errors import OperatorConnectionError, OperatorError, RedirectError, error_class_for

DEFAULT_BASE_URL = "http://localhost:3000"
RETRIED_STATUSES = frozenset({429, 503})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})
TERMINAL_STATUSES = frozenset({"succeeded", "failed", "canceled"})
USER_AGENT = "browser-device-operator-python/0.1.0"

T = TypeVar("T")

#: The answer of an escalation: text, true or false, a list of options, or an object of
#: credentials fields (it must match the escalation's `answer_schema`).
Answer = str | bool | list[str] | dict[str, str]


@dataclass
class Page(Generic[T]):
    """One page of a list, newest first; `next_cursor` is `""` on the last page."""

    data: list[T]
    next_cursor: str


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of 429 and 503 answers and of broken connections; `RetryPolicy(max_retries=0)`
    turns them off."""

    #: Retries after the first attempt. Default 3.
    max_retries: int = 3
    #: First backoff when the service gives no `Retry-After`; doubled each time. Default 0.5 s.
    initial_delay: float = 0.5
    #: Longest single wait, `Retry-After` included. Default 30 s.
    max_delay: float = 30.0


@dataclass(frozen=True)
class ClientConfig:
    api_key: str
    base_url: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeout: float = 60.0

    @staticmethod
    def resolve(api_key: str | None, base_url: str | None, retry: RetryPolicy | None, timeout: float) -> ClientConfig:
        """The argument, else `OPERATOR_API_KEY` / `OPERATOR_BASE_URL`; the URL without `/v1`."""
        key = api_key if api_key is not None else os.environ.get("OPERATOR_API_KEY", "")
        if not key:
            raise ValueError("No API key: pass api_key= or set OPERATOR_API_KEY")
        url = base_url if base_url is not None else os.environ.get("OPERATOR_BASE_URL") or DEFAULT_BASE_URL
        url = url.rstrip("/").removesuffix("/v1")
        return ClientConfig(api_key=key, base_url=url, retry=retry or RetryPolicy(), timeout=timeout)

    def url(self, path: str) -> str:
        return f"{self.base_url}/v1{path}"

    def headers(self, method: str, idempotency_key: str | None, bearer: str | None = None) -> dict[str, str]:
        """Every POST carries an `Idempotency-Key` (the caller's or a new UUID) that all its
        retries reuse, so a retried create never makes two devices or tasks."""
        headers = {"Authorization": f"Bearer {bearer or self.api_key}", "User-Agent": USER_AGENT}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        elif method == "POST":
            headers["Idempotency-Key"] = str(uuid.uuid4())
        return headers


def is_repeatable(request: httpx.Request) -> bool:
    """A broken connection is retried only when repeating the request is safe."""
    return request.method in SAFE_METHODS or "idempotency-key" in request.headers


def should_retry_status(status: int, attempt: int, policy: RetryPolicy) -> bool:
    return status in RETRIED_STATUSES and attempt < policy.max_retries


def backoff_seconds(attempt: int, policy: RetryPolicy, retry_after: float | None) -> float:
    if retry_after is not None:
        return min(policy.max_delay, retry_after)
    base: float = policy.initial_delay * 2**attempt
    # Full jitter keeps many clients that failed together from retrying together.
    return min(policy.max_delay, base / 2 + random.random() * base / 2)


def retry_after_seconds(response: httpx.Response) -> float | None:
    """Seconds of a `Retry-After` header (delta-seconds or an HTTP date), if present."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, float(email.utils.parsedate_to_datetime(value).timestamp()) - time.time())
    except (TypeError, ValueError):
        return None


def error_from_response(response: httpx.Response) -> OperatorError:
    """The typed error of a non-2xx answer whose body has been read."""
    request_id = response.headers.get("x-request-id")
    if 300 <= response.status_code < 400:
        return RedirectError(
            f"The service answered HTTP {response.status_code}; redirects are not followed.",
            status=response.status_code,
            request_id=request_id,
            location=response.headers.get("location"),
        )
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    parsed: dict[str, Any] = error if isinstance(error, dict) else {}

    def text(name: str) -> str | None:
        value = parsed.get(name)
        return value if isinstance(value, str) else None

    return error_class_for(response.status_code)(
        text("message") or f"The service answered HTTP {response.status_code}.",
        code=text("code") or f"http_{response.status_code}",
        status=response.status_code,
        request_id=text("request_id") or request_id,
        param=text("param"),
        retry_after=retry_after_seconds(response),
    )


def connection_error(cause: BaseException) -> OperatorConnectionError:
    error = OperatorConnectionError("Could not reach the service.", code="connection_error", status=0)
    error.__cause__ = cause
    return error


def drop_none(**values: Any) -> dict[str, Any]:
    """A body or query of the arguments that were given (None means "not given")."""
    return {name: value for name, value in values.items() if value is not None}


class Omitted(enum.Enum):
    """The default of an update's removable fields, where None is a value: it removes the
    field (`credentials.update(id, notes=None)`), while OMITTED leaves it as it is."""

    OMITTED = "omitted"


OMITTED = Omitted.OMITTED


def drop_omitted(**values: Any) -> dict[str, Any]:
    """A PATCH body of the arguments that were given, None kept (it is sent as null)."""
    return {name: value for name, value in values.items() if value is not OMITTED}


@dataclass
class SseMessage:
    event: str
    data: str
    id: str | None


class SseDecoder:
    """Reads a `text/event-stream` body line by line (line ends already removed);
    comments and keep-alives are skipped."""

    def __init__(self) -> None:
        self._event = "message"
        self._data: list[str] = []
        self._id: str | None = None

    def feed(self, line: str) -> SseMessage | None:
        line = line.rstrip("\r\n")
        if line == "":
            message = SseMessage(self._event, "\n".join(self._data), self._id) if self._data else None
            self._event, self._data, self._id = "message", [], None
            return message
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            self._id = value
        return None


def parse_json(data: str) -> Any:
    return json.loads(data)


class StreamProgress:
    """Where a task's event stream is, across reconnections: the last step seen (so a
    resumed stream neither repeats nor skips one) and how many reconnections in a row
    brought nothing new."""

    def __init__(self, after_seq: int, max_reconnects: int) -> None:
        self.after_seq = after_seq
        self.max_reconnects = max_reconnects
        self.fruitless = 0
        self.progressed = False

    def accept(self, seq: int) -> bool:
        """Whether step `seq` is new (and now the last one seen)."""
        if seq <= self.after_seq:
            return False
        self.after_seq = seq
        self.progressed = True
        return True

    def dropped(self) -> None:
        """The stream ended without `done`: the connection dropped or its time ran out."""
        self.fruitless = 0 if self.progressed else self.fruitless + 1
        self.progressed = False

    @property
    def exhausted(self) -> bool:
        return self.fruitless > self.max_reconnects

    def delay(self, policy: RetryPolicy) -> float:
        return 0.0 if self.fruitless == 0 else backoff_seconds(self.fruitless - 1, policy, None)
