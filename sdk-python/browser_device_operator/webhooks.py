"""Receiver-side verification of webhook deliveries and escalation deliveries, which are
signed the same way (docs/webhooks.md, "Verifying a delivery"). Standard library only, so
it can be copied into a project as it is; the same rules as the TypeScript SDK's
verify-webhook.ts, checked against the same vectors (sdk/test/webhook-vectors.json)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import TYPE_CHECKING, Any, Literal, Union, cast, overload

if TYPE_CHECKING:  # at run time this module needs the standard library only
    from .types import EscalationDelivery, EventEnvelope

__all__ = ["WebhookVerificationError", "verify_webhook"]

_HEX_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_UNIX_SECONDS = re.compile(r"[0-9]{1,15}")

VerificationReason = Literal["missing_header", "malformed_header", "signature_mismatch", "timestamp_out_of_tolerance", "invalid_payload"]


class WebhookVerificationError(Exception):
    """The delivery is not to be trusted; answer 400. `reason` says why, for your logs."""

    def __init__(self, reason: VerificationReason) -> None:
        super().__init__(f"webhook verification failed: {reason}")
        self.reason: VerificationReason = reason


def _parse_header(header: str) -> tuple[int, list[bytes]]:
    """`t=<unix>,v1=<hex>[,v1=<hex>...]`: pairs in any order, unknown schemes ignored, so the
    service can add a scheme or send two v1 values while rotating secrets."""
    timestamp: int | None = None
    signatures: list[bytes] = []
    for part in header.split(","):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            continue
        if key == "t":
            if timestamp is not None or not _UNIX_SECONDS.fullmatch(value):
                raise WebhookVerificationError("malformed_header")
            timestamp = int(value)
        elif key == "v1" and _HEX_SHA256.fullmatch(value):
            signatures.append(bytes.fromhex(value))
    if timestamp is None or not signatures:
        raise WebhookVerificationError("malformed_header")
    return timestamp, signatures


def _is_envelope(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("created_at"), str)


def _is_escalation_delivery(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    escalation = value.get("escalation")
    return (
        isinstance(escalation, dict)
        and isinstance(escalation.get("id"), str)
        and isinstance(value.get("resolve_url"), str)
        and isinstance(value.get("token"), str)
    )


@overload
def verify_webhook(
    raw_body: bytes | str,
    signature_header: str | None,
    secret: str,
    tolerance: int = 300,
    *,
    now: float | None = None,
    delivery: Literal["event"] = "event",
) -> EventEnvelope: ...


@overload
def verify_webhook(
    raw_body: bytes | str,
    signature_header: str | None,
    secret: str,
    tolerance: int = 300,
    *,
    now: float | None = None,
    delivery: Literal["escalation"],
) -> EscalationDelivery: ...


def verify_webhook(
    raw_body: bytes | str,
    signature_header: str | None,
    secret: str,
    tolerance: int = 300,
    *,
    now: float | None = None,
    delivery: Literal["event", "escalation"] = "event",
) -> Union[EventEnvelope, EscalationDelivery]:
    """Verifies one delivery and returns its parsed body: the event envelope of a webhook
    (`types.EventEnvelope`), or with `delivery="escalation"` (and the organization's
    escalation signing secret) the escalation delivery (`types.EscalationDelivery`).

    `raw_body` is the body exactly as received (bytes, or the same bytes as a UTF-8 str),
    never JSON parsed and serialized again: the MAC covers raw bytes. `signature_header` is
    `X-Service-Signature` (None when absent). `secret` is used as the create response
    returned it, `whsec_` included. `tolerance` is the largest accepted distance in
    seconds between the signed `t` and `now` (default: the clock), in either direction.
    Deduplicate on the returned envelope's `id`; `X-Service-Delivery` is not signed.

    Raises WebhookVerificationError (`reason`: `missing_header`, `malformed_header`,
    `signature_mismatch`, `timestamp_out_of_tolerance`, `invalid_payload`).
    """
    if signature_header is None or signature_header.strip() == "":
        raise WebhookVerificationError("missing_header")
    timestamp, signatures = _parse_header(signature_header)
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else bytes(raw_body)

    expected = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode() + body, hashlib.sha256).digest()
    # Every candidate is compared, in constant time each.
    matches = [hmac.compare_digest(candidate, expected) for candidate in signatures]
    if not any(matches):
        raise WebhookVerificationError("signature_mismatch")

    # Checked after the MAC, so the timestamp compared is one the service signed.
    current = int(time.time() if now is None else now)
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError("timestamp_out_of_tolerance")

    try:
        parsed = json.loads(body.decode("utf-8"))
    except ValueError:
        raise WebhookVerificationError("invalid_payload") from None
    valid = _is_escalation_delivery(parsed) if delivery == "escalation" else _is_envelope(parsed)
    if not valid:
        raise WebhookVerificationError("invalid_payload")
    return cast("Union[EventEnvelope, EscalationDelivery]", parsed)
