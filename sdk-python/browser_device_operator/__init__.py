"""Python client of the Browser Device Operator Service: devices, tasks and their steps,
live view and takeover, CDP, escalations, webhooks, task caches, the credential vault.
`OperatorClient` is synchronous, `AsyncOperatorClient` is the same on asyncio;
`verify_webhook` checks deliveries."""

from ._async_client import AsyncOperatorClient, AsyncPages
from ._sync_client import OperatorClient, Pages
from ._transport import OMITTED, Answer, Omitted, Page, RetryPolicy
from .errors import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    OperatorConnectionError,
    OperatorError,
    PermissionDeniedError,
    RateLimitError,
    RedirectError,
    ServiceError,
)
from .live_view import AsyncLiveView, LiveFrame, LiveInput, LiveReconnect, LiveRefusal, LiveView
from .webhooks import WebhookVerificationError, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "OMITTED",
    "Answer",
    "AsyncLiveView",
    "AsyncOperatorClient",
    "AsyncPages",
    "AuthenticationError",
    "ConflictError",
    "InvalidRequestError",
    "LiveFrame",
    "LiveInput",
    "LiveReconnect",
    "LiveRefusal",
    "LiveView",
    "NotFoundError",
    "Omitted",
    "OperatorClient",
    "OperatorConnectionError",
    "OperatorError",
    "Page",
    "Pages",
    "PermissionDeniedError",
    "RateLimitError",
    "RedirectError",
    "RetryPolicy",
    "ServiceError",
    "WebhookVerificationError",
    "verify_webhook",
]
